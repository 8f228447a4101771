import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The repository root and the `codeaction` bin, for tests that drive the CLI as a user would. */
export const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url));
export const binPath = fileURLToPath(new URL("../bin/codeaction.js", import.meta.url));

export type CliRun = { exitCode: number | null; stdout: string; stderr: string; pid: number | undefined };

/**
 * This process's environment without an OpenAI key or base URL (a test's command never reaches a
 * real model by accident), with `changes` applied: a value set, undefined removed.
 */
export function commandEnvironment(changes: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/**
 * Runs `node packages/cli/bin/codeaction.js ...args` as a child process, with no OPENAI_API_KEY
 * unless `env` sets one, with `input` on stdin (else none), and resolves with its exit code and output. Kills it after `timeoutMs`.
 */
export function runCli(
  args: string[],
  options: {
    cwd?: string;
    env?: Record<string, string | undefined>;
    timeoutMs?: number;
    input?: string;
    /** Run this command line instead of `node codeaction.js ...args` (a wrapper such as `script`). */
    command?: string[];
  } = {},
): Promise<CliRun> {
  const env = commandEnvironment(options.env);
  return new Promise((resolve, reject) => {
    const [file, ...commandArgs] = options.command ?? [process.execPath, binPath, ...args];
    const child = spawn(file!, commandArgs, {
      cwd: options.cwd ?? repositoryRoot,
      env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 100_000);
    child.on("error", reject);
    child.on("close", (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stdout, stderr, pid: child.pid });
    });
  });
}
