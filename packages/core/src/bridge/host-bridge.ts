import { isUtf8 } from "node:buffer";
import type { Logger } from "pino";
import { ToolInputError } from "../errors/tool-input-error.ts";
import type { ToolSpec } from "../tool-spec.ts";
import { encodeToolValue } from "../tool-value.ts";
import type { AgentEvent, ApprovalDecision, ApprovalHook, OutputBytes, ToolCallRecord } from "../types.ts";
import { describeUnknownKeys, findUnknownKeys } from "../unknown-keys.ts";
import { type KeptValue, keepMessage, keepValue, keptCharacters } from "./bounded-value.ts";
import {
  encodeFrame,
  encodeHeaderFrame,
  type Frame,
  FrameDecoder,
  hostFrame,
  parseJsonObject,
  relayFrame,
  splitHeaderFrame,
} from "./frames.ts";
import { ProgramClock } from "./program-clock.ts";
import { parseToolRequest, requestIdPattern } from "./tool-request.ts";

/** The relay's exec: what `SandboxSession.spawn` returns (and a local child process in tests). */
export type RelayProcess = {
  stdin: NodeJS.WritableStream;
  stdout: NodeJS.ReadableStream;
  stderr: NodeJS.ReadableStream;
  exit: Promise<{ exitCode: number | null }>;
  /** Last resort when the relay does not answer a kill: kills every process the exec started. */
  kill?: () => Promise<void>;
};

/** How the program ended, as the relay reported it. `exitCode` is 128 + signal when signalled. */
export type RelayExit = {
  exitCode: number;
  signal: number | null;
  /** True when the host asked the relay to kill the program (timeout, abort). */
  killed: boolean;
  stdoutBytes: number;
  stderrBytes: number;
  /**
   * Entries the relay saw in the output folder after the program ended (it stops counting at 2);
   * absent when that is not a plain folder or the relay did not say. A hint only: at 0 the host
   * skips reading the folder (the program can only hide its own files that way).
   */
  outputEntries?: number;
};

export type BridgeOptions = {
  process: RelayProcess;
  program: string;
  /** The full `codeaction_tools` module source (see toolsModuleSource). */
  toolsModule: string;
  tools: ToolSpec[];
  runId: string;
  /** Seconds of program time; approval waits do not count. */
  execTimeout: number;
  maxToolCalls: number;
  /** Per stream; default 1 MiB. */
  maxOutputBytes?: number;
  /** Largest request file the relay reads; default 1 MiB. */
  maxRequestBytes?: number;
  /** Largest result (its JSON) the host sends back; default 16 MiB (codeAction.maxResultBytes). */
  maxResponseBytes?: number;
  approval?: ApprovalHook;
  logger?: Logger;
  onEvent?: (event: AgentEvent) => void;
  signal?: AbortSignal;
  /** Where the relay puts the program, the module and the request/response folders. */
  bridgeDirectory?: string;
  /** The program's working directory. */
  workDirectory?: string;
  /** After the program ends, also kill every other process of its uid (never as uid 0). Default true. */
  killStragglers?: boolean;
  /** How long to wait for the relay's exit report after a kill; default 2000 ms. */
  killGraceMs?: number;
  /** How long the exec and the relay may take to start the program; default 30 s (not program time). */
  startupTimeoutMs?: number;
};

export type BridgeOutcome = {
  /** Absent when the relay never reported an exit (killed past the grace period, or it failed). */
  exit?: RelayExit;
  stdout: string;
  stderr: string;
  truncated: boolean;
  /**
   * The output cap cut the last stdout `RESULT:` line away (wholly or partly): there is no answer,
   * even if an earlier RESULT line is still visible.
   */
  resultLost?: boolean;
  toolCalls: ToolCallRecord[];
  /** True when a call went past maxToolCalls, whether or not the program caught the error. */
  limitHit: boolean;
  /**
   * The relay was killed by this signal before it reported the program's exit: the program's doing
   * (it shares the relay's uid), unless the OOM killer did it. Its stderr says so.
   */
  relaySignal?: number;
  /** The program kept calling far past maxToolCalls (a flood of the bridge): the host ended its run. */
  flooded?: boolean;
  timedOut: boolean;
  aborted: boolean;
  /** Set when the channel broke or the relay broke the protocol: an infrastructure failure. */
  failure?: string;
  runMs: number;
} & OutputBytes;

export const bridgeDefaults = {
  bridgeDirectory: "/workspace/.codeaction",
  workDirectory: "/workspace",
  maxOutputBytes: 1024 * 1024,
  maxRequestBytes: 1024 * 1024,
  maxResponseBytes: 16 * 1024 * 1024,
  killGraceMs: 2000,
  startupTimeoutMs: 30_000,
} as const;

/**
 * Calls past the cap still get an answer, but only this many of them are recorded; a program that
 * rings this many times past the cap (in any way: new ids, repeated ids, ids with no request file)
 * is flooding the bridge, and its run ends as a tool-limit failure.
 */
const extraRecords = 100;
/** Characters of arguments, results and previews the records of one run may keep; past it, only sizes. */
const maxKeptCharacters = 4 * 1024 * 1024;
/** Bytes of answers waiting to reach the relay past which the host stops reading new requests. */
const pendingAnswerBytes = 1024 * 1024;
const relayStderrLimit = 64 * 1024;
const tailLimit = 64 * 1024;

type ErrorType = "ToolError" | "ToolDenied" | "ToolCallLimitExceeded";
type Response = { ok: true; value: unknown } | { ok: false; error: { type: ErrorType; message: string } };

/** A tool call as the bridge received it; `args` is what its record keeps of the arguments. */
type CallStart = {
  id: string;
  tool: string;
  startedAt: number;
  requestBytes: number;
  args?: KeptValue | undefined;
};

type StreamCapture = { name: string; chunks: Buffer[]; bytes: number; tail?: Buffer; dropped: number };

/**
 * Runs one program through the relay over its exec's stdio and answers its tool calls. Never
 * throws: every way a run can end is in the outcome. The relay and the program share a uid, so
 * every frame is treated as hostile: sizes are capped before buffering, ids and requests are
 * validated, and anything malformed ends the run as an infrastructure failure.
 */
export function runBridge(options: BridgeOptions): Promise<BridgeOutcome> {
  return new BridgeRun(options).run();
}

class BridgeRun {
  readonly #options: BridgeOptions;
  readonly #tools: Map<string, ToolSpec>;
  readonly #logger: Logger | undefined;
  readonly #decoder: FrameDecoder;
  readonly #clock: ProgramClock;
  readonly #limits: { output: number; request: number; response: number };
  readonly #records: ToolCallRecord[] = [];
  /** Calls being answered: a `cancelled` record is made for each one the program's end cuts off. */
  readonly #inFlight = new Map<string, { controller: AbortController; call: CallStart }>();
  readonly #seen = new Set<string>();
  readonly #stdout: StreamCapture = { name: "stdout", chunks: [], bytes: 0, dropped: 0 };
  readonly #stderr: StreamCapture = { name: "stderr", chunks: [], bytes: 0, dropped: 0 };
  readonly #relayStderr: Buffer[] = [];
  #relayStderrBytes = 0;
  #overflow = false;
  /** The relay saw the last stdout RESULT: line fall (wholly or partly) into the dropped bytes. */
  #resultLost = false;
  #calls = 0;
  /** Every request the relay forwarded, answered or not. */
  #requests = 0;
  #keptCharacters = 0;
  #floodEnded = false;
  #paused = false;
  /** The signal that ended the relay, when one did before it reported the program's exit. */
  #relaySignal: number | undefined;
  #unrecorded = 0;
  #limitHit = false;
  #timedOut = false;
  #aborted = false;
  #killSent = false;
  #failure: string | undefined;
  #exit: RelayExit | undefined;
  #finished = false;
  #startedAt = 0;
  #endedAt: number | undefined;
  #graceTimer: NodeJS.Timeout | undefined;
  #startupTimer: NodeJS.Timeout | undefined;
  #resolve: ((outcome: BridgeOutcome) => void) | undefined;
  #onAbort = () => {
    this.#aborted = true;
    this.#killAndWait();
  };

  constructor(options: BridgeOptions) {
    this.#options = options;
    this.#tools = new Map(options.tools.map((tool) => [tool.name, tool]));
    this.#logger = options.logger?.child({ component: "bridge", runId: options.runId });
    this.#limits = {
      output: options.maxOutputBytes ?? bridgeDefaults.maxOutputBytes,
      request: options.maxRequestBytes ?? bridgeDefaults.maxRequestBytes,
      response: options.maxResponseBytes ?? bridgeDefaults.maxResponseBytes,
    };
    const small = 64 * 1024;
    this.#decoder = new FrameDecoder({
      [relayFrame.ready]: small,
      [relayFrame.stdout]: Math.max(small, this.#limits.output),
      [relayFrame.stderr]: Math.max(small, this.#limits.output),
      [relayFrame.tail]: tailLimit + 1025,
      [relayFrame.request]: this.#limits.request + 1025,
      [relayFrame.notice]: small,
      [relayFrame.exit]: small,
      [relayFrame.fatal]: small,
    });
    this.#clock = new ProgramClock({
      limitMs: options.execTimeout * 1000,
      onExpire: () => {
        this.#timedOut = true;
        this.#logger?.debug({ execTimeout: options.execTimeout }, "program timed out");
        this.#killAndWait();
      },
    });
  }

  run(): Promise<BridgeOutcome> {
    const { process, signal } = this.#options;
    return new Promise<BridgeOutcome>((resolve) => {
      this.#resolve = resolve;
      this.#startedAt = performance.now();
      process.stdout.on("data", (chunk: Buffer | string) => this.#onData(chunk));
      process.stdout.on("end", () => void this.#onStreamEnd());
      process.stdout.on("close", () => void this.#onStreamEnd());
      process.stdout.on("error", (error: Error) =>
        this.#fail(`the relay's output stream failed: ${error.message}`),
      );
      process.stderr.on("data", (chunk: Buffer | string) => this.#captureRelayStderr(chunk));
      process.stderr.on("error", () => undefined);
      process.stdin.on("error", (error: Error) =>
        this.#logger?.debug({ error: error.message }, "relay stdin error"),
      );
      if (signal?.aborted) {
        this.#aborted = true;
        this.#finish();
        return;
      }
      signal?.addEventListener("abort", this.#onAbort, { once: true });
      const start = {
        program: this.#options.program,
        module: this.#options.toolsModule,
        bridgeDirectory: this.#options.bridgeDirectory ?? bridgeDefaults.bridgeDirectory,
        workDirectory: this.#options.workDirectory ?? bridgeDefaults.workDirectory,
        maxOutputBytes: this.#limits.output,
        maxRequestBytes: this.#limits.request,
        killStragglers: this.#options.killStragglers ?? true,
      };
      this.#write(encodeFrame(hostFrame.start, JSON.stringify(start)));
      // The program's clock starts when the relay reports the program running (frame R), so exec
      // and interpreter start-up do not eat into execTimeout; start-up has its own bound.
      const startup = this.#options.startupTimeoutMs ?? bridgeDefaults.startupTimeoutMs;
      this.#startupTimer = setTimeout(
        () => this.#fail(`the relay did not start the program within ${startup} ms`),
        startup,
      );
    });
  }

  // Frames from the relay ----------------------------------------------------------------

  #onData(chunk: Buffer | string): void {
    if (this.#finished) return;
    try {
      for (const frame of this.#decoder.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))) {
        this.#onFrame(frame);
        if (this.#finished) return;
      }
    } catch (error) {
      this.#fail(`the relay broke the bridge protocol: ${(error as Error).message}`);
    }
  }

  #onFrame(frame: Frame): void {
    switch (frame.type) {
      case relayFrame.ready:
        this.#logger?.debug(parseJsonObject(frame.payload), "program started");
        clearTimeout(this.#startupTimer);
        this.#clock.start();
        return;
      case relayFrame.stdout:
        this.#capture(this.#stdout, frame.payload);
        return;
      case relayFrame.stderr:
        this.#capture(this.#stderr, frame.payload);
        return;
      case relayFrame.tail:
        this.#captureTail(frame.payload);
        return;
      case relayFrame.request: {
        const { header, body } = splitHeaderFrame(frame.payload);
        const id = header.id;
        if (typeof id !== "string" || !requestIdPattern.test(id))
          throw new Error("a request has an invalid id");
        const refused = typeof header.refused === "string" ? header.refused.slice(0, 300) : undefined;
        this.#requests += 1;
        if (this.#requests > this.#options.maxToolCalls + extraRecords) {
          this.#endFlood();
          return;
        }
        this.#onRequest(id, body, refused).catch((error: unknown) =>
          this.#fail(`answering a tool call failed: ${errorMessage(error)}`),
        );
        return;
      }
      case relayFrame.notice:
        this.#logger?.debug(
          { notice: String(parseJsonObject(frame.payload).message).slice(0, 300) },
          "relay notice",
        );
        return;
      case relayFrame.exit:
        this.#exit = parseExit(parseJsonObject(frame.payload));
        this.#endedAt = performance.now();
        this.#finish();
        return;
      case relayFrame.fatal:
        this.#fail(`the relay failed: ${String(parseJsonObject(frame.payload).message).slice(0, 500)}`);
        return;
    }
  }

  #capture(stream: StreamCapture, payload: Buffer): void {
    const room = this.#limits.output - stream.bytes;
    if (payload.length > room) this.#overflow = true;
    const kept = payload.length > room ? payload.subarray(0, Math.max(0, room)) : payload;
    if (kept.length === 0) return;
    stream.chunks.push(Buffer.from(kept));
    stream.bytes += kept.length;
  }

  #captureTail(payload: Buffer): void {
    const { header, body } = splitHeaderFrame(payload);
    const stream =
      header.stream === "stdout" ? this.#stdout : header.stream === "stderr" ? this.#stderr : undefined;
    const dropped = header.dropped;
    if (
      !stream ||
      stream.tail ||
      typeof dropped !== "number" ||
      !Number.isSafeInteger(dropped) ||
      dropped < 0
    ) {
      throw new Error("a tail frame is malformed or repeated");
    }
    stream.tail = Buffer.from(body);
    stream.dropped = dropped;
    if (header.resultLost === true && stream === this.#stdout) this.#resultLost = true;
  }

  #captureRelayStderr(chunk: Buffer | string): void {
    if (this.#relayStderrBytes >= relayStderrLimit) return;
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    const kept = bytes.subarray(0, relayStderrLimit - this.#relayStderrBytes);
    this.#relayStderr.push(Buffer.from(kept));
    this.#relayStderrBytes += kept.length;
  }

  // Tool calls ------------------------------------------------------------------------------

  async #onRequest(id: string, body: Buffer, refused: string | undefined): Promise<void> {
    if (this.#finished) return;
    if (this.#inFlight.has(id)) {
      this.#logger?.debug({ id }, "ignored a repeated request that is still running");
      return;
    }
    if (this.#seen.has(id)) {
      this.#reply(id, failure("ToolError", `request ${id} was already answered; every call needs a new id`));
      return;
    }
    const parsed: ReturnType<typeof parseToolRequest> = refused
      ? { ok: false, reason: refused }
      : parseToolRequest(id, body, { maxBytes: this.#limits.request });
    const call: CallStart = {
      id,
      tool: parsed.ok ? parsed.request.tool : (parsed.tool ?? ""),
      startedAt: performance.now(),
      requestBytes: body.length,
    };
    this.#calls += 1;
    if (this.#calls > this.#options.maxToolCalls) {
      this.#limitHit = true;
      const message = `the run may make at most ${this.#options.maxToolCalls} tool calls (maxToolCalls); this call was not made`;
      return this.#refuse(call, "limit", failure("ToolCallLimitExceeded", message));
    }
    this.#seen.add(id);
    if (!parsed.ok)
      return this.#refuse(call, "invalid", failure("ToolError", `invalid tool call: ${parsed.reason}`));
    const spec = this.#tools.get(parsed.request.tool);
    if (!spec) {
      const known = [...this.#tools.keys()].map((name) => JSON.stringify(name)).join(", ") || "none";
      const message = `unknown tool ${JSON.stringify(call.tool)}; the tools are: ${known}`;
      return this.#refuse(call, "unknown-tool", failure("ToolError", message));
    }
    call.args = this.#keep(keepValue(parsed.request.args));
    this.#emitCall(call);
    const unknownKeys = findUnknownKeys(spec.inputSchema, parsed.request.args);
    if (unknownKeys.length > 0) {
      const refusal = new ToolInputError({ tool: spec.name, issues: describeUnknownKeys(unknownKeys) });
      return this.#settle(call, "invalid", failure("ToolError", refusal.message));
    }
    const controller = new AbortController();
    this.#inFlight.set(id, { controller, call });
    try {
      await this.#invoke(call, spec, parsed.request.args, controller.signal, id);
    } finally {
      this.#inFlight.delete(id);
    }
  }

  async #invoke(
    call: CallStart,
    spec: ToolSpec,
    args: Record<string, unknown>,
    signal: AbortSignal,
    callId: string,
  ) {
    const denial = await this.#approve(spec.name, args, signal);
    if (this.#finished) return;
    if (denial !== undefined) return this.#settle(call, "denied", failure("ToolDenied", denial));
    // The value is encoded once (tool-value.ts): the program's JSON, and a JSON-safe copy to record.
    let value: unknown;
    let json: string;
    try {
      const encoded = encodeToolValue(
        await spec.invoke(args, { runId: this.#options.runId, signal, callId }),
        spec.name,
      );
      value = encoded.record;
      json = encoded.text;
    } catch (error) {
      if (this.#finished) return;
      // Arguments the tool's schema refused are "invalid", like the bridge's own checks.
      const status = ToolInputError.isInstance(error) ? "invalid" : "error";
      return this.#settle(call, status, failure("ToolError", errorMessage(error)));
    }
    if (this.#finished) return;
    const bytes = Buffer.byteLength(json);
    if (bytes > this.#limits.response) {
      const message = `the result of ${spec.name} is ${bytes} bytes, over the bridge's limit of ${this.#limits.response} bytes (codeAction.maxResultBytes); ask for less (filter, page or aggregate in the tool)`;
      return this.#settle(call, "error", failure("ToolError", message), { bytes });
    }
    this.#settle(call, "ok", { ok: true, value }, { kept: this.#keep(keepValue(value)), json });
  }

  /** Undefined when approved, else the reason to give the program. The clock stands still meanwhile. */
  async #approve(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    const approval = this.#options.approval;
    if (!approval) return undefined;
    let decision: ApprovalDecision;
    this.#clock.pause();
    try {
      decision = await approval({ tool, args, runId: this.#options.runId, signal });
    } catch (error) {
      return `the approval hook failed, so the call to ${tool} was not made: ${errorMessage(error)}`;
    } finally {
      this.#clock.resume();
    }
    if (decision === true) return undefined;
    if (typeof decision === "object" && decision !== null) {
      if (decision.approved === true) return undefined;
      if (typeof decision.reason === "string" && decision.reason !== "") return decision.reason;
    }
    return `the call to ${tool} was not approved`;
  }

  /** A call the bridge refused before any tool ran: only its size and the reason are kept. */
  #refuse(call: CallStart, status: ToolCallRecord["status"], response: Response): void {
    this.#emitCall(call);
    this.#settle(call, status, response);
  }

  #emitCall(call: CallStart): void {
    this.#options.onEvent?.({
      type: "tool-call",
      runId: this.#options.runId,
      id: call.id,
      tool: call.tool,
      ...keptFields(call.args, "args"),
    });
  }

  /** Keeps `kept` whole while the run's record budget lasts; past it, nothing but sizes is kept. */
  #keep(kept: KeptValue): KeptValue | undefined {
    const characters = keptCharacters(kept);
    if (this.#keptCharacters + characters > maxKeptCharacters) return undefined;
    this.#keptCharacters += characters;
    return kept;
  }

  #settle(
    call: CallStart,
    status: ToolCallRecord["status"],
    response: Response,
    result: { kept?: KeptValue | undefined; json?: string; bytes?: number } = {},
  ): void {
    const { id, tool } = call;
    const durationMs = performance.now() - call.startedAt;
    const record: ToolCallRecord = { id, tool, status, durationMs, requestBytes: call.requestBytes };
    Object.assign(record, keptFields(call.args, "args"));
    if (response.ok) Object.assign(record, keptFields(result.kept, "result"));
    else record.error = keepMessage(response.error.message);
    const resultBytes =
      result.bytes ?? (result.json === undefined ? undefined : Buffer.byteLength(result.json));
    if (resultBytes !== undefined && record.result === undefined) record.resultBytes = resultBytes;
    if (this.#records.length < this.#options.maxToolCalls + extraRecords) this.#records.push(record);
    else this.#unrecorded += 1;
    this.#logger?.debug({ id, tool, status, durationMs }, "tool call");
    const { args: _args, argsPreview: _preview, requestBytes: _bytes, ...outcome } = record;
    this.#options.onEvent?.({ type: "tool-result", runId: this.#options.runId, ...outcome });
    this.#reply(id, response, result.json);
  }

  #reply(id: string, response: Response, valueJson?: string): void {
    if (this.#finished) return;
    let body =
      response.ok && valueJson !== undefined ? `{"ok":true,"value":${valueJson}}` : JSON.stringify(response);
    if (valueJson === undefined && Buffer.byteLength(body) > this.#limits.response) {
      const message = `the answer is ${Buffer.byteLength(body)} bytes, over the bridge's limit of ${this.#limits.response}`;
      body = JSON.stringify(failure("ToolError", message));
    }
    this.#write(encodeHeaderFrame(hostFrame.answer, { id }, body));
  }

  // Ending ---------------------------------------------------------------------------------

  #write(frame: Buffer): void {
    const { stdin, stdout } = this.#options.process;
    try {
      stdin.write(frame);
      // Back-pressure: while answers wait to reach the relay, read no new requests (the relay keeps
      // reading its stdin while it waits to write, so this cannot deadlock).
      if (!this.#paused && writableLength(stdin) > pendingAnswerBytes) {
        this.#paused = true;
        stdout.pause();
        stdin.once("drain", () => {
          this.#paused = false;
          if (!this.#finished) stdout.resume();
        });
      }
    } catch (error) {
      this.#fail(`could not write to the relay: ${errorMessage(error)}`);
    }
  }

  /** Too many requests past maxToolCalls: the program is flooding the bridge; end its run. */
  #endFlood(): void {
    if (this.#floodEnded) return;
    this.#floodEnded = true;
    this.#limitHit = true;
    this.#logger?.debug({ requests: this.#requests }, "the program flooded the bridge; ending the run");
    this.#killAndWait();
  }

  #killAndWait(): void {
    if (this.#finished) return;
    if (!this.#killSent) {
      this.#killSent = true;
      this.#write(encodeFrame(hostFrame.kill));
    }
    const grace = this.#options.killGraceMs ?? bridgeDefaults.killGraceMs;
    this.#graceTimer ??= setTimeout(() => {
      this.#logger?.debug({ grace }, "the relay did not report an exit after the kill");
      this.#options.process.kill?.().catch(() => undefined);
      this.#finish();
    }, grace);
  }

  #fail(message: string): void {
    if (this.#finished) return;
    this.#failure ??= message;
    this.#logger?.debug({ failure: message }, "bridge failure");
    if (!this.#killSent) {
      this.#killSent = true;
      this.#write(encodeFrame(hostFrame.kill));
    }
    this.#finish();
  }

  async #onStreamEnd(): Promise<void> {
    if (this.#finished) return;
    if (this.#timedOut || this.#aborted) return this.#finish();
    const exit = await Promise.race([
      this.#options.process.exit.then(
        (value) => value.exitCode,
        () => null,
      ),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 1000).unref()),
    ]);
    if (exit !== null && exit > 128 && exit <= 128 + 64) {
      // Killed by a signal: nothing outside the container does that, but the program (same uid) can.
      this.#relaySignal = exit - 128;
      return this.#finish();
    }
    const stderr = Buffer.concat(this.#relayStderr).toString("utf8").trim().slice(-1000);
    this.#fail(
      `the relay's output ended before it reported the program's exit (relay exit code ${exit ?? "unknown"})` +
        (stderr ? `: ${stderr}` : ""),
    );
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#endedAt ??= performance.now();
    this.#clock.stop();
    clearTimeout(this.#graceTimer);
    clearTimeout(this.#startupTimer);
    this.#options.signal?.removeEventListener("abort", this.#onAbort);
    // Calls still running are cut off: told to stop, and recorded `cancelled` (no answer is sent).
    for (const { controller, call } of this.#inFlight.values()) {
      controller.abort(new Error("the program ended"));
      this.#settle(call, "cancelled", failure("ToolError", "the program ended before the call finished"));
    }
    const { stdin, stdout } = this.#options.process;
    try {
      stdin.end();
    } catch {
      // the relay is already gone
    }
    stdout.resume();
    if (this.#unrecorded > 0)
      this.#logger?.debug({ unrecorded: this.#unrecorded }, "calls past the cap not recorded");
    if (this.#relayStderrBytes > 0) {
      this.#logger?.debug({ relayStderr: Buffer.concat(this.#relayStderr).toString("utf8") }, "relay stderr");
    }
    const programOut = assemble(this.#stdout);
    const programErr = assemble(this.#stderr);
    if (this.#relaySignal !== undefined) {
      programErr.text += `\n[codeaction: the bridge relay was killed by signal ${this.#relaySignal} before the program ended; the program must not signal the relay or other processes it did not start]\n`;
    }
    this.#resolve?.({
      ...(this.#exit ? { exit: this.#exit } : {}),
      stdout: programOut.text,
      stderr: programErr.text,
      ...(programOut.base64 === undefined ? {} : { stdoutBase64: programOut.base64 }),
      ...(programErr.base64 === undefined ? {} : { stderrBase64: programErr.base64 }),
      truncated: this.#overflow || this.#stdout.dropped > 0 || this.#stderr.dropped > 0,
      ...(this.#resultLost ? { resultLost: true } : {}),
      toolCalls: this.#records,
      limitHit: this.#limitHit,
      ...(this.#floodEnded ? { flooded: true } : {}),
      ...(this.#relaySignal === undefined ? {} : { relaySignal: this.#relaySignal }),
      timedOut: this.#timedOut,
      aborted: this.#aborted,
      ...(this.#failure ? { failure: this.#failure } : {}),
      runMs: this.#endedAt - this.#startedAt,
    });
  }
}

/** The record fields for a kept value: `name` whole, or `namePreview` and (for results) `nameBytes` and `nameLength`. */
function keptFields(kept: KeptValue | undefined, name: "args" | "result"): Record<string, unknown> {
  if (kept === undefined) return {};
  if ("value" in kept) return { [name]: kept.value };
  if (name === "args") return { argsPreview: kept.preview };
  return {
    resultPreview: kept.preview,
    resultBytes: kept.bytes,
    ...(kept.length === undefined ? {} : { resultLength: kept.length }),
  };
}

/** Bytes written to a stream and not yet flushed (0 for a stream that does not say). */
function writableLength(stream: NodeJS.WritableStream): number {
  return (stream as { writableLength?: number }).writableLength ?? 0;
}

function failure(type: ErrorType, message: string): Response {
  return { ok: false, error: { type, message } };
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

function parseExit(value: Record<string, unknown>): RelayExit {
  const count = (name: string): number => {
    const item = value[name];
    if (typeof item !== "number" || !Number.isSafeInteger(item) || item < 0) {
      throw new Error(`the exit report's ${name} is not a count`);
    }
    return item;
  };
  const exitCode = count("exitCode");
  const signal = value.signal;
  if (signal !== null && (typeof signal !== "number" || !Number.isSafeInteger(signal))) {
    throw new Error("the exit report's signal is not a number");
  }
  if (typeof value.killed !== "boolean") throw new Error("the exit report's killed flag is not a boolean");
  const entries = value.outputEntries;
  return {
    exitCode,
    signal,
    killed: value.killed,
    stdoutBytes: count("stdoutBytes"),
    stderrBytes: count("stderrBytes"),
    ...(typeof entries === "number" && Number.isSafeInteger(entries) && entries >= 0
      ? { outputEntries: entries }
      : {}),
  };
}

/**
 * The captured head, a marker where bytes were dropped, then the kept tail: as text, and as exact
 * bytes (base64) when they are not valid UTF-8 (the text then holds U+FFFD in their place).
 */
function assemble(stream: StreamCapture): { text: string; base64?: string } {
  const parts = [...stream.chunks];
  if (stream.dropped > 0) {
    // A line the cap cut short is marked "cut here", so it is never read as a whole RESULT line.
    const endsLine = stream.bytes === 0 || stream.chunks.at(-1)?.at(-1) === 10;
    const text = endsLine
      ? `[... ${stream.dropped} bytes of ${stream.name} omitted ...]\n`
      : `\n[... cut here: ${stream.dropped} bytes of ${stream.name} omitted ...]\n`;
    parts.push(Buffer.from(text));
  }
  if (stream.tail) parts.push(stream.tail);
  const bytes = Buffer.concat(parts);
  const text = new TextDecoder("utf-8").decode(bytes);
  return isUtf8(bytes) ? { text } : { text, base64: bytes.toString("base64") };
}
