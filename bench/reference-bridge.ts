import { PassThrough } from "node:stream";
import type { ToolSpec } from "@codeaction/core";
import type { SandboxSession } from "@codeaction/sandbox";
import type Dockerode from "dockerode";

/**
 * A faithful replica of the reference framework's tool bridge, to measure against ours. The program's
 * stub writes a request file and polls for a done marker every 20 ms; the host lists the request
 * folder with `docker exec ls` every 30 ms, reads each new request with `docker exec cat`, and writes
 * the response and then the done marker with two more execs. Each exec is what docker-py's
 * `exec_run` does: create, start (reading the output to its end), inspect for the exit code.
 */

const bridgeFolder = "/workspace/.bridge";
const hostPollMs = 30;

/** The stub module the program gets (Python); `_call` is the whole container side of the protocol. */
export function referenceStubs(toolNames: readonly string[]): string {
  const functions = toolNames
    .map((name) => `def ${name}(**arguments):\n    return _call(${JSON.stringify(name)}, arguments)\n`)
    .join("\n");
  return `import json as _json, os as _os, time as _time, uuid as _uuid
_BRIDGE = ${JSON.stringify(bridgeFolder)}
_os.makedirs(_BRIDGE + "/requests", exist_ok=True)
_os.makedirs(_BRIDGE + "/responses", exist_ok=True)

class ToolError(Exception):
    pass

def _call(tool, arguments):
    request_id = _uuid.uuid4().hex
    temporary = f"{_BRIDGE}/requests/.{request_id}.tmp"
    with open(temporary, "w") as file:
        _json.dump({"id": request_id, "tool": tool, "args": arguments}, file)
    _os.rename(temporary, f"{_BRIDGE}/requests/{request_id}.json")
    done = f"{_BRIDGE}/responses/{request_id}.done"
    while not _os.path.exists(done):
        _time.sleep(0.02)
    with open(f"{_BRIDGE}/responses/{request_id}.json") as file:
        response = _json.load(file)
    if not response["ok"]:
        raise ToolError(response["error"])
    return response["value"]

${functions}`;
}

type ExecOutput = { exitCode: number | null; stdout: string };

/** One `exec_run`: create, start with output attached (stdin when given), read to the end, inspect. */
async function execRun(container: Dockerode.Container, argv: string[], input?: string): Promise<ExecOutput> {
  const exec = await container.exec({
    Cmd: argv,
    AttachStdin: input !== undefined,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: input !== undefined })) as NodeJS.ReadWriteStream;
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  stderr.resume();
  container.modem.demuxStream(stream, stdout, stderr);
  const ended = new Promise<void>((resolve) => {
    stream.on("end", resolve);
    stream.on("close", resolve);
    stream.on("error", () => resolve());
  });
  if (input !== undefined) stream.end(input);
  await ended;
  const info = await exec.inspect();
  return { exitCode: info.ExitCode ?? null, stdout: Buffer.concat(chunks).toString("utf8") };
}

export type ReferenceRun = { exitCode: number; stdout: string; stderr: string; calls: number };

/** Runs `program` (after the stubs) in `session`'s container and answers its calls the reference's way. */
export async function runReferenceBridge(options: {
  docker: Dockerode;
  session: SandboxSession;
  program: string;
  tools: ToolSpec[];
}): Promise<ReferenceRun> {
  const container = options.docker.getContainer(options.session.containerId);
  const tools = new Map(options.tools.map((tool) => [tool.name, tool]));
  const source = `${referenceStubs([...tools.keys()])}\n${options.program}\n`;
  const process = options.session.spawn(["python3", "-I", "-c", source]);
  process.stdin.end();
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  process.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  process.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  let ended = false;
  const exit = process.exit.finally(() => {
    ended = true;
  });
  const seen = new Set<string>();
  let calls = 0;
  const controller = new AbortController();
  while (!ended) {
    const listing = await execRun(container, ["ls", `${bridgeFolder}/requests`]);
    for (const name of listing.stdout.split("\n")) {
      if (!name.endsWith(".json") || seen.has(name)) continue;
      seen.add(name);
      const request = JSON.parse(
        (await execRun(container, ["cat", `${bridgeFolder}/requests/${name}`])).stdout,
      ) as {
        id: string;
        tool: string;
        args: Record<string, unknown>;
      };
      let response: unknown;
      try {
        const tool = tools.get(request.tool);
        if (!tool) throw new Error(`unknown tool ${request.tool}`);
        response = {
          ok: true,
          value: await tool.invoke(request.args, { runId: "reference", signal: controller.signal }),
        };
      } catch (error) {
        response = { ok: false, error: (error as Error).message };
      }
      const base = `${bridgeFolder}/responses/${request.id}`;
      await execRun(container, ["sh", "-c", 'cat > "$1"', "write", `${base}.json`], JSON.stringify(response));
      await execRun(container, ["touch", `${base}.done`]);
      calls += 1;
    }
    if (!ended) await new Promise((resolve) => setTimeout(resolve, hostPollMs));
  }
  const { exitCode } = await exit;
  return {
    exitCode,
    stdout: Buffer.concat(stdout).toString("utf8"),
    stderr: Buffer.concat(stderr).toString("utf8"),
    calls,
  };
}
