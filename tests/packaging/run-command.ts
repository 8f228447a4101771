import { spawn } from "node:child_process";

export type CommandRun = { exitCode: number | null; stdout: string; stderr: string };

/** At most this much of a command's stdout and stderr is kept (installers can be chatty). */
const outputCap = 1024 * 1024;

/**
 * Runs a command (no shell) with no OPENAI_API_KEY nor OPENAI_BASE_URL but what `env` gives, keeping at most 1 MiB of each stream, and
 * resolves with its exit code and output; SIGKILLs it after `timeoutMs`.
 */
export function runCommand(
  command: string,
  args: string[],
  options: { cwd: string; timeoutMs: number; env?: Record<string, string> },
): Promise<CommandRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_update_notifier: "false" };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  Object.assign(env, options.env);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      if (stdout.length < outputCap) stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      if (stderr.length < outputCap) stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("error", reject);
    child.on("close", (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stdout, stderr });
    });
  });
}

/** The command's output for an assertion message. */
export function describeRun(run: CommandRun): string {
  return `exit ${run.exitCode}\n--- stdout\n${run.stdout.slice(-4000)}\n--- stderr\n${run.stderr.slice(-4000)}`;
}
