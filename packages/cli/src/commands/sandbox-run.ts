import {
  DATA_IMAGE,
  DEFAULT_IMAGE,
  type ExecResult,
  parseSize,
  type SandboxConfigInput,
  SandboxManager,
} from "@codeaction/sandbox";
import { choiceOption, numberOption, parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { UsageError } from "../errors/usage-error.ts";
import { readProgramFile } from "../program/read-program.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { createProgress } from "../terminal/progress.ts";

export const sandboxRunHelp = `Usage: codeaction sandbox run FILE.py [options]

Runs one Python program in a fresh sandbox container, the way code-action runs a model's program
(python3 -I, as a uid of its own, read-only system, /workspace writable), then removes the container.
Prints the program's stdout and stderr (escape sequences shown as text) and a status line on stderr:
the exit code, and whether it timed out or ran out of memory. Exits 0 when the program exited 0,
else 1.

Options:
  --network none|full  the container's network (default none)
  --memory SIZE        memory limit, such as 256M or 4G (default 4G)
  --timeout SECONDS    time limit; the program and everything it started are killed (default 120)
  --cpus N             CPU limit (default 2)
  --gvisor             run under gVisor (runsc; needs --network none)
  --image NAME         the image (default ${DEFAULT_IMAGE})
  --data               the data image, ${DATA_IMAGE} (numpy, pandas)
  --debug              show stack traces
  -h, --help           show this help

Examples:
  codeaction sandbox run examples/hostile.py
  codeaction sandbox run greedy.py --memory 256M --timeout 5 --cpus 1`;

const programPath = "/workspace/program.py";

export async function sandboxRunCommand(args: string[], context: CliContext): Promise<number> {
  const parsed = parseSandboxRunArguments(args);
  if (parsed === "help") {
    context.stdout.write(`${sandboxRunHelp}\n`);
    return 0;
  }
  const { file, config, timeout } = parsed;
  const source = await readProgramFile(file, context.cwd);
  const progress = createProgress({ stream: context.stderr });
  const manager = new SandboxManager(config);
  let result: ExecResult;
  try {
    progress.update("connecting to Docker");
    await manager.ready();
    progress.update(
      `starting a sandbox (${manager.config.image}${config.backend === "gvisor" ? ", gVisor" : ""})`,
    );
    const session = await manager.createSession();
    progress.update(`running ${file}`);
    await session.writeFile(programPath, source);
    result = await session.execute(`python3 -I ${programPath}`, { timeout });
  } finally {
    progress.stop();
    await manager.close();
  }

  context.stdout.write(escapeForTerminal(result.stdout));
  if (result.stdout && !result.stdout.endsWith("\n")) context.stdout.write("\n");
  if (result.stderr) {
    context.stderr.write(escapeForTerminal(result.stderr));
    if (!result.stderr.endsWith("\n")) context.stderr.write("\n");
  }
  context.stderr.write(`${describeResult(result, { timeout, memory: manager.config.memoryLimit })}\n`);
  return result.exitCode === 0 && !result.timedOut ? 0 : 1;
}

/** The command line as the file to run, its sandbox settings and time limit; or a UsageError. */
function parseSandboxRunArguments(
  args: string[],
): "help" | { file: string; config: SandboxConfigInput; timeout: number } {
  const command = "sandbox run";
  const { values, positionals } = parseCommandArguments(command, args, {
    network: { type: "string" },
    memory: { type: "string" },
    timeout: { type: "string" },
    cpus: { type: "string" },
    gvisor: { type: "boolean" },
    image: { type: "string" },
    data: { type: "boolean" },
  });
  if (values.help) return "help";
  const [file, ...extra] = positionals;
  if (file === undefined) throw new UsageError({ command, message: "give the Python file to run" });
  if (extra.length > 0)
    throw new UsageError({ command, message: `unexpected argument ${JSON.stringify(extra[0])}` });
  const network = choiceOption(command, "network", values.network, ["none", "full"] as const) ?? "none";
  const timeout = numberOption(command, "timeout", values.timeout, { minimum: 1, maximum: 86_400 }) ?? 120;
  const cpus = numberOption(command, "cpus", values.cpus, { minimum: 0.01, maximum: 256 });
  const memoryBytes = values.memory === undefined ? undefined : parseSize(values.memory);
  if (values.memory !== undefined && memoryBytes === undefined) {
    throw new UsageError({
      command,
      message: `--memory must be a size such as 256M or 4G, got ${JSON.stringify(values.memory)}`,
    });
  }
  if (values.image !== undefined && values.data) {
    throw new UsageError({ command, message: "--image and --data cannot be combined" });
  }
  if (values.gvisor && network !== "none") {
    throw new UsageError({ command, message: "--gvisor runs with --network none only" });
  }
  const config: SandboxConfigInput = { network, timeout, ...sandboxImage(values) };
  if (values.memory !== undefined && memoryBytes !== undefined) {
    config.memoryLimit = values.memory;
    // /workspace is a tmpfs that counts toward memory: keep it within the limit.
    if (memoryBytes < 2 * 1024 ** 3) config.diskLimit = Math.max(1024 ** 2, Math.floor(memoryBytes / 2));
  }
  if (cpus !== undefined) config.cpuLimit = cpus;
  if (values.gvisor) config.backend = "gvisor";
  return { file, config, timeout };
}

/** --image NAME or --data as sandbox settings. */
export function sandboxImage(values: { image?: string; data?: boolean }): { image?: string } {
  if (values.image !== undefined) return { image: values.image };
  if (values.data) return { image: DATA_IMAGE };
  return {};
}

/** The status line: `[sandbox] exit 137: killed for using more than its 256M of memory (1.2 s)`. */
export function describeResult(
  result: ExecResult,
  limits: { timeout: number; memory: string | number },
): string {
  const seconds = `${(result.durationMs / 1000).toFixed(1)} s`;
  const parts: string[] = [];
  if (result.timedOut) {
    parts.push(`timed out after ${limits.timeout} s; the program and every process it started were killed`);
  } else if (result.oomKilled) {
    parts.push(
      `exit ${result.exitCode}: killed by the kernel for going over its memory limit (${limits.memory})`,
    );
  } else if (result.exitCode > 128 && result.exitCode < 160) {
    parts.push(`exit ${result.exitCode}: killed by signal ${result.exitCode - 128}, not by the memory limit`);
  } else {
    parts.push(`exit ${result.exitCode}`);
  }
  if (result.truncated) parts.push("output truncated");
  if (result.workspaceReset) parts.push("the container was replaced");
  return `[sandbox] ${parts.join("; ")} (${seconds})`;
}
