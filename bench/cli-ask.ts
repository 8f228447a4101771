import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SandboxManager } from "@codeaction/sandbox";
import type Dockerode from "dockerode";
import { fenced } from "./agents.ts";
import { settle } from "./docker-state.ts";
import { overheadProgram } from "./turn-overhead.ts";

export type CliAskSamples = { ask: number[]; sandboxRun: number[]; containerStart: number[] };

/** Runs the `codeaction` bin as a user would; resolves with its wall time, or throws on failure. */
function timedCli(bin: string, args: string[], cwd: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.on("error", reject);
    child.on("close", (exitCode) => {
      const ms = performance.now() - started;
      if (exitCode === 0) resolve(ms);
      else reject(new Error(`codeaction ${args[0]} exited ${exitCode}: ${output.slice(-400)}`));
    });
  });
}

/**
 * The CLI's single turn, side by side, interleaved: `codeaction ask` with a replayed model (one
 * reply, `print("RESULT: 1")`), `codeaction sandbox run` of the same program (a CLI process whose
 * work is one container start and the run), and, in this process, a cold container start alone
 * (`createSession` without a pool: created, flags read back, started, kill helper ready).
 */
export async function measureCliAsk(options: {
  docker: Dockerode;
  /** The installed CLI's bin.js (installed-cli.ts). */
  bin: string;
  rounds: number;
  onProgress?: (message: string) => void;
}): Promise<CliAskSamples> {
  const folder = await mkdtemp(join(tmpdir(), "codeaction-bench-cli-"));
  const replay = join(folder, "one.json");
  const program = join(folder, "one.py");
  await writeFile(replay, JSON.stringify({ replies: [fenced(overheadProgram)] }));
  await writeFile(program, `${overheadProgram}\n`);
  const manager = new SandboxManager({ pool: 0 });
  await manager.ready();
  const samples: CliAskSamples = { ask: [], sandboxRun: [], containerStart: [] };
  const env = { cwd: folder };
  try {
    for (let round = 0; round <= options.rounds; round += 1) {
      await settle(options.docker, { expected: 0 });
      const ask = await timedCli(
        options.bin,
        ["ask", "--replay", replay, "--no-journal", "What is one?"],
        env.cwd,
      );
      const sandboxRun = await timedCli(options.bin, ["sandbox", "run", program], env.cwd);
      await settle(options.docker, { expected: 0 });
      const started = performance.now();
      const session = await manager.createSession();
      await session.execute("true");
      const containerStart = performance.now() - started;
      await session.close();
      // The first round loads caches and is not counted.
      if (round > 0) {
        samples.ask.push(ask);
        samples.sandboxRun.push(sandboxRun);
        samples.containerStart.push(containerStart);
      }
      options.onProgress?.(`cli ask round ${round}/${options.rounds}`);
    }
  } finally {
    await manager.close();
    await rm(folder, { recursive: true, force: true });
  }
  return samples;
}
