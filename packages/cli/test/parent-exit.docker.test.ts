import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binPath, commandEnvironment, repositoryRoot } from "./run-cli.ts";

// `npx codeaction desk` stopped through npm's pid: npm does not pass the signal on, so the desk is
// left running, reparented. The desk notices its parent went away and stops, removing its containers.
// Here a parent process (standing in for npm) starts the desk and is SIGKILLed.

const orders = join(repositoryRoot, "examples/data/orders.csv");
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-parent-exit-"));
  await writeFile(join(folder, "replay.json"), JSON.stringify({ replies: [] }));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** A parent that starts `codeaction desk` and prints its pid; the desk's own output comes through it. */
function startParent() {
  const command = [
    process.execPath,
    binPath,
    "desk",
    "--port",
    "0",
    "--csv",
    orders,
    "--replay",
    "replay.json",
  ];
  const script = [
    "const { spawn } = require('node:child_process');",
    `const child = spawn(${JSON.stringify(command[0])}, ${JSON.stringify(command.slice(1))}, { stdio: ['ignore', 'inherit', 'inherit'] });`,
    "console.log('desk pid ' + child.pid);",
  ].join("\n");
  const parent = spawn(process.execPath, ["-e", script], {
    cwd: folder,
    env: commandEnvironment(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  parent.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  parent.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  const listening = new Promise<number>((resolve, reject) => {
    const check = setInterval(() => {
      const pid = /desk pid (\d+)/.exec(output)?.[1];
      if (pid && output.includes("codeaction desk: http")) {
        clearInterval(check);
        resolve(Number(pid));
      }
    }, 50);
    parent.once("exit", () => {
      clearInterval(check);
      reject(new Error(`the parent ended before the desk listened:\n${output}`));
    });
  });
  return { parent, listening, output: () => output };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Whether the process ended within 30 s (the desk looks at its parent once a second). */
async function endsSoon(pid: number): Promise<boolean> {
  for (let waited = 0; alive(pid) && waited < 30_000; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return !alive(pid);
}

/** The containers (any state) that the desk process owns, by its owner label. */
function containersOf(pid: number): Promise<string[]> {
  const filter = `label=codeaction.owner-pid=${pid}`;
  return new Promise((resolve, reject) => {
    execFile("docker", ["ps", "-aq", "--filter", filter], (error, stdout) =>
      error ? reject(error) : resolve(stdout.split("\n").filter(Boolean)),
    );
  });
}

describe("a desk whose parent went away", () => {
  it("stops by itself, says why, and leaves no container", async () => {
    const started = startParent();
    const desk = await started.listening;
    try {
      expect(alive(desk)).toBe(true);
      // The desk keeps a container ready for the first question: the one it must remove. Its warm
      // pool fills in the background, so the container may come a moment after the desk listens.
      await expect.poll(() => containersOf(desk), { timeout: 60_000, interval: 200 }).toHaveLength(1);
      started.parent.kill("SIGKILL");
      const ended = await endsSoon(desk);
      expect(ended).toBe(true);
      expect(started.output()).toContain("codeaction desk: the process that started it has ended; stopping");
      expect(await containersOf(desk)).toEqual([]);
    } finally {
      // A failed assertion above leaves neither process behind (nor the desk's containers).
      started.parent.kill("SIGKILL");
      if (alive(desk)) process.kill(desk, "SIGTERM");
    }
  });
});
