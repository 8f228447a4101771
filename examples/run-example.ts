import { execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const repositoryRoot = fileURLToPath(new URL("../", import.meta.url));

export type ExampleRun = { exitCode: number | null; stdout: string; stderr: string; pid: number };

/**
 * Runs `node examples/<name>.ts` from the repository root as a user would, with no OPENAI_API_KEY
 * or OPENAI_BASE_URL (so model examples play their replay) unless `env` sets them. Kills it after `timeoutMs`.
 */
export function runExample(
  name: string,
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ExampleRun> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  Object.assign(env, options.env);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`examples/${name}.ts`], {
      cwd: repositoryRoot,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 100_000);
    child.on("error", reject);
    child.on("close", (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stdout, stderr, pid: child.pid ?? -1 });
    });
  });
}

/** Ids of the sandbox containers a process created that still exist (the sandbox labels each with its owner's pid). */
export async function containersLeftBy(pid: number): Promise<string[]> {
  const { stdout } = await promisify(execFile)("docker", [
    "ps",
    "--all",
    "--quiet",
    "--filter",
    `label=codeaction.owner-pid=${pid}`,
  ]);
  return stdout.split("\n").filter(Boolean);
}
