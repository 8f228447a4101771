// A recording fake of the engine seam (src/engine/container-engine.ts) for unit tests of the
// manager, the pool and the prelaunch take-over: it keeps containers in memory, answers inspect with
// what was asked for (every flag "took"), runs the kill helper's protocol on its exec, and records
// every call in order ("create c1", "start c1", "remove c1", ...). A test can make the next call of
// a kind fail. Not shipped; the real-engine tests stay authoritative.
import { Duplex } from "node:stream";
import type {
  ContainerCreateOptions,
  ContainerEngine,
  ContainerInspectInfo,
  ContainerSummary,
  EngineContainer,
  EngineExec,
  ExecCreateOptions,
  ImageInspectInfo,
  ListOptions,
} from "../src/engine/container-engine.ts";

/** The calls a test can make fail (the next one of its kind rejects with the error given). */
export type FailingCall = "create" | "start" | "inspect" | "attach" | "exec" | "remove";

type FakeContainer = {
  id: string;
  name: string;
  spec: ContainerCreateOptions;
  created: number;
  running: boolean;
  removed: boolean;
  /** The container's stdin attaches (lifelines): they end when the container is removed. */
  attachments: Duplex[];
  execs: Duplex[];
};

/** One Docker stream frame (stdout 1, stderr 2) as a non-TTY exec sends it. */
function frame(kind: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header.writeUInt8(kind, 0);
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

/** An engine in memory that records what the sandbox asks of it. */
export class RecordingEngine implements ContainerEngine {
  /** Every call, in order: "create c1", "inspect c1", "attach c1", "start c1", "exec c1 kill-helper", "remove c1", ... */
  readonly calls: string[] = [];
  /** The image the engine has (inspectImage of any other name is a 404). */
  image = { name: "codeaction/python:3.11", env: ["PATH=/usr/local/bin:/usr/bin:/bin"] };
  private readonly containers = new Map<string, FakeContainer>();
  private readonly failures = new Map<FailingCall, Error[]>();
  private readonly waiters = new Map<FailingCall, Array<{ gate: Promise<void> }>>();
  private counter = 0;
  private droppedFlag: string | undefined;
  private helperReadyGate: Promise<void> | undefined;
  /** What each command exec (not the kill helper) was sent on stdin, by its exec call. */
  private readonly inputs = new Map<string, string>();

  /** Commands whose execs print `stdout` and exit with `exitCode` at once (the first word of their argv). */
  private readonly scripted: ScriptedCommand[] = [];

  /** Every exec of `command` (its argv's first word) prints `stdout` and ends with `exitCode`. */
  scriptCommand(command: string, result: { stdout?: string; exitCode: number }): void {
    this.scripted.push({ command, stdout: result.stdout ?? "", exitCode: result.exitCode });
  }

  /** The next `call` (of any container) rejects with `error`. Several queue up. */
  failNext(call: FailingCall, error: Error = new Error(`the fake engine refused ${call}`)): void {
    const queue = this.failures.get(call) ?? [];
    queue.push(error);
    this.failures.set(call, queue);
  }

  /** The next `call` waits until the returned function is called (to hold a start in flight). */
  holdNext(call: FailingCall): () => void {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const queue = this.waiters.get(call) ?? [];
    queue.push({ gate });
    this.waiters.set(call, queue);
    return open;
  }

  /** Kill helpers say "ready" only once the returned function is called (those started until then). */
  holdKillHelperReady(): () => void {
    let open: () => void = () => undefined;
    this.helperReadyGate = new Promise<void>((resolve) => (open = resolve));
    return () => {
      this.helperReadyGate = undefined;
      open();
    };
  }

  /** What the command of an exec call ("exec c1 python3 ...") has read from its stdin so far. */
  inputOf(call: string): string {
    return this.inputs.get(call) ?? "";
  }

  /** The next container created reads back without this HostConfig flag (an engine that ignored it). */
  dropFlagOnce(flag: string): void {
    this.droppedFlag = flag;
  }

  /** The labels a container was created with. */
  labelsOf(id: string): Record<string, string> {
    return { ...(this.require(id).spec.Labels ?? {}) };
  }

  /** Ids of containers created and not removed. */
  liveContainers(): string[] {
    return [...this.containers.values()].filter((container) => !container.removed).map((c) => c.id);
  }

  /** The calls of one kind ("create", "start", "remove", ...), with their container ids. */
  callsOf(kind: string): string[] {
    return this.calls.filter((call) => call.split(" ")[0] === kind);
  }

  /** Stops a container as if its PID 1 ended (its lifeline attach ends with it). */
  stop(id: string): void {
    const container = this.require(id);
    container.running = false;
    for (const attachment of container.attachments) attachment.destroy();
  }

  /** A container the engine already holds (another manager's, left behind), labelled as given. */
  addContainer(
    labels: Record<string, string>,
    options: { running?: boolean; created?: number } = {},
  ): string {
    const id = this.nextId();
    this.containers.set(id, {
      id,
      name: id,
      spec: { Image: this.image.name, Labels: labels },
      created: options.created ?? Math.floor(Date.now() / 1000),
      running: options.running ?? true,
      removed: false,
      attachments: [],
      execs: [],
    });
    return id;
  }

  async ping(): Promise<unknown> {
    this.calls.push("ping");
    return "OK";
  }

  async version(): Promise<unknown> {
    return { Version: "fake", ApiVersion: "1.47", Os: "linux", Arch: "amd64", KernelVersion: "6" };
  }

  async info(): Promise<unknown> {
    return { Runtimes: { runc: { path: "runc" }, runsc: { path: "/usr/local/bin/runsc" } } };
  }

  async createContainer(spec: ContainerCreateOptions): Promise<EngineContainer> {
    await this.gate("create");
    const id = this.nextId();
    this.calls.push(`create ${id}`);
    this.fail("create");
    const dropped = this.droppedFlag;
    this.droppedFlag = undefined;
    const hostConfig = { ...spec.HostConfig };
    if (dropped) delete (hostConfig as Record<string, unknown>)[dropped];
    this.containers.set(id, {
      id,
      name: id,
      spec: { ...spec, HostConfig: hostConfig },
      created: Math.floor(Date.now() / 1000),
      running: false,
      removed: false,
      attachments: [],
      execs: [],
    });
    return this.getContainer(id);
  }

  getContainer(id: string): EngineContainer {
    return {
      id,
      inspect: () => this.inspect(id),
      start: () => this.start(id),
      remove: () => this.remove(id),
      attach: () => this.attach(id),
      exec: (options) => this.exec(id, options),
      logs: () => Promise.reject(new Error("the fake engine keeps no logs")),
      infoArchive: () => Promise.reject(Object.assign(new Error("no such file"), { statusCode: 404 })),
    };
  }

  async listContainers(options: ListOptions): Promise<ContainerSummary[]> {
    this.calls.push("list");
    const wanted = options.filters?.label ?? [];
    return [...this.containers.values()]
      .filter((container) => !container.removed)
      .filter((container) =>
        wanted.every((filter) => {
          const [key, value] = filter.split("=");
          const labels = container.spec.Labels ?? {};
          return value === undefined ? key! in labels : labels[key!] === value;
        }),
      )
      .map(
        (container) =>
          ({
            Id: container.id,
            Labels: container.spec.Labels ?? {},
            State: container.running ? "running" : "exited",
            Created: container.created,
          }) as ContainerSummary,
      );
  }

  getImage(name: string): { inspect(): Promise<ImageInspectInfo> } {
    return {
      inspect: async () => {
        if (name !== this.image.name) {
          throw Object.assign(new Error(`(HTTP code 404) no such image - ${name}`), { statusCode: 404 });
        }
        return {
          Id: "sha256:fake",
          Config: { Env: this.image.env, Labels: {} },
        } as unknown as ImageInspectInfo;
      },
    };
  }

  async buildImage(): Promise<never> {
    throw new Error("the fake engine builds no images");
  }

  async importImage(): Promise<never> {
    throw new Error("the fake engine imports no images");
  }

  async createNetwork(): Promise<{ id: string }> {
    throw new Error("the fake engine has no networks");
  }

  getNetwork(): never {
    throw new Error("the fake engine has no networks");
  }

  async listNetworks(): Promise<never[]> {
    return [];
  }

  private nextId(): string {
    this.counter += 1;
    return `c${this.counter}`;
  }

  private require(id: string): FakeContainer {
    const container = this.containers.get(id);
    if (!container || container.removed) {
      throw Object.assign(new Error(`(HTTP code 404) no such container - ${id}`), { statusCode: 404 });
    }
    return container;
  }

  private fail(call: FailingCall): void {
    const error = this.failures.get(call)?.shift();
    if (error) throw error;
  }

  private async gate(call: FailingCall): Promise<void> {
    const waiter = this.waiters.get(call)?.shift();
    if (waiter) await waiter.gate;
  }

  private async inspect(id: string): Promise<ContainerInspectInfo> {
    this.calls.push(`inspect ${id}`);
    this.fail("inspect");
    const container = this.require(id);
    const spec = container.spec;
    return {
      Id: id,
      Config: {
        Image: spec.Image,
        Labels: spec.Labels ?? {},
        Env: [...this.image.env, ...(spec.Env ?? [])],
        User: spec.User,
        Hostname: spec.Hostname,
      },
      HostConfig: spec.HostConfig ?? {},
      // As Docker reports the binds asked for in HostConfig.Mounts.
      Mounts: (spec.HostConfig?.Mounts ?? []).map((mount) => ({
        Type: mount.Type,
        Source: mount.Source,
        Destination: mount.Target,
        Mode: "",
        RW: !mount.ReadOnly,
        Propagation: mount.BindOptions?.Propagation ?? "rprivate",
      })),
      NetworkSettings: { Networks: {} },
      State: { Running: container.running, Status: container.running ? "running" : "created" },
    } as unknown as ContainerInspectInfo;
  }

  private async start(id: string): Promise<void> {
    await this.gate("start");
    this.calls.push(`start ${id}`);
    this.fail("start");
    this.require(id).running = true;
  }

  private async remove(id: string): Promise<void> {
    this.calls.push(`remove ${id}`);
    this.fail("remove");
    const container = this.require(id);
    container.removed = true;
    container.running = false;
    for (const stream of [...container.attachments, ...container.execs]) {
      if (!stream.destroyed) stream.push(null);
    }
  }

  private async attach(id: string): Promise<NodeJS.ReadWriteStream> {
    this.calls.push(`attach ${id}`);
    this.fail("attach");
    const container = this.require(id);
    const lifeline = new Duplex({ read() {}, write: (_chunk, _encoding, done) => done() });
    container.attachments.push(lifeline);
    return lifeline;
  }

  private async exec(id: string, options: ExecCreateOptions): Promise<EngineExec> {
    const helper = options.Cmd.includes("codeaction-kill-helper");
    const call = `exec ${id} ${helper ? "kill-helper" : options.Cmd.join(" ")}`;
    this.calls.push(call);
    this.fail("exec");
    const container = this.require(id);
    let exitCode: number | null = null;
    const scripted = this.scripted.find((script) => options.Cmd[0] === script.command);
    const stream = helper
      ? killHelperStream(this.helperReadyGate)
      : scripted
        ? scriptedStream(scripted)
        : commandStream((text) => this.inputs.set(call, this.inputOf(call) + text));
    stream.on("end", () => (exitCode ??= scripted?.exitCode ?? 0));
    stream.on("close", () => (exitCode ??= 137));
    return {
      start: async () => {
        if (!container.running || container.removed) throw new Error(`container ${id} is not running`);
        container.execs.push(stream);
        return stream;
      },
      inspect: async () => ({ Running: exitCode === null, ExitCode: exitCode }),
    };
  }
}

/** The kill helper's side: "ready" (once `readyGate` opens), then an answer per request line. */
function killHelperStream(readyGate: Promise<void> | undefined): Duplex {
  let pending = "";
  const stream: Duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, done) {
      pending += chunk.toString();
      for (let newline = pending.indexOf("\n"); newline >= 0; newline = pending.indexOf("\n")) {
        const request = pending.slice(0, newline).split(" ")[0];
        pending = pending.slice(newline + 1);
        const answer = request === "kill" ? "killed 0 survivors 0" : request === "oom" ? "oom 0" : "pong";
        stream.push(frame(1, `${answer}\n`));
      }
      done();
    },
  });
  if (readyGate) void readyGate.then(() => stream.push(frame(1, "ready 7\n")));
  else stream.push(frame(1, "ready 7\n"));
  return stream;
}

type ScriptedCommand = { command: string; stdout: string; exitCode: number };

/** A scripted command: its output, then its end. */
function scriptedStream(script: ScriptedCommand): Duplex {
  const stream = new Duplex({ read() {}, write: (_chunk, _encoding, done) => done() });
  if (script.stdout) stream.push(frame(1, script.stdout));
  stream.push(null);
  return stream;
}

/** Any other command: reads its stdin (`onInput`) till it ends, then exits 0 with no output. */
function commandStream(onInput: (text: string) => void): Duplex {
  const stream: Duplex = new Duplex({
    read() {},
    write: (chunk: Buffer, _encoding, done) => {
      onInput(chunk.toString());
      done();
    },
    final(done) {
      stream.push(null);
      done();
    },
  });
  return stream;
}
