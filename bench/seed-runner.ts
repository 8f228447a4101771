import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";

/**
 * Seed 000's `run_sandboxed`, as written there: one `docker run --rm -i` per program, with its
 * flags, the program on stdin, through the docker CLI. Only the image and the interpreter differ
 * (`codeaction/python:3.11` and `python3`: no registry is reachable here).
 */
export function seedRunnerArgs(image: string): { name: string; args: string[] } {
  const name = `pot-${randomBytes(6).toString("hex")}`;
  const args = [
    "run",
    "--rm",
    "-i",
    "--name",
    name,
    "--network",
    "none",
    "--memory",
    "256m",
    "--cpus",
    "1",
    "--pids-limit",
    "64",
    "--read-only",
    "--tmpfs",
    "/tmp:size=16m",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--user",
    "65534:65534",
    image,
    "python3",
    "-I",
    "-",
  ];
  return { name, args };
}

export type SeedRun = { exitCode: number | null; stdout: string; stderr: string };

export function runSeedProgram(
  program: string,
  options: { image: string; timeoutMs?: number },
): Promise<SeedRun> {
  const { name, args } = seedRunnerArgs(options.image);
  return new Promise((resolve, reject) => {
    const child = spawn("docker", args, { stdio: ["pipe", "pipe", "pipe"] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      spawn("docker", ["rm", "-f", name], { stdio: "ignore" });
    }, options.timeoutMs ?? 60_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (exitCode) => {
      clearTimeout(timer);
      resolve({
        exitCode,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
      });
    });
    child.stdin.end(program);
  });
}
