import { spawn } from "node:child_process";
import { existsSync, openSync, readFileSync, rmSync } from "node:fs";
import { get } from "node:http";
import { fileURLToPath } from "node:url";
import { buildAgent } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { tool } from "@langchain/core/tools";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { containersOfThisProcess, fenced } from "../support/harness.ts";

// Catalogue L3: dockerd restarted mid-run, 5 times (alternating runc and gVisor). The run must end
// with an infrastructure error, never a success, and the next run must work. dockerd here was
// started by scripts/setup.sh as `nohup setsid dockerd`; it is restarted the same way, and afterAll
// makes sure it runs again even when a test failed.

const pidFile = "/var/run/docker.pid";
const logFile = fileURLToPath(new URL("../../.tools/dockerd.log", import.meta.url));
const trials = 5;

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A plain ping over the socket (no client that could cache a failure). */
function pings(): Promise<boolean> {
  return new Promise((resolve) => {
    const request = get({ socketPath: "/var/run/docker.sock", path: "/_ping", timeout: 3000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on("error", () => resolve(false));
    request.on("timeout", () => {
      request.destroy();
      resolve(false);
    });
  });
}

async function startDockerd(): Promise<void> {
  if (await pings()) return;
  if (existsSync(pidFile) && !alive(Number(readFileSync(pidFile, "utf8")))) rmSync(pidFile, { force: true });
  const log = openSync(logFile, "a");
  const child = spawn("setsid", ["dockerd"], { detached: true, stdio: ["ignore", log, log] });
  child.unref();
  for (let attempt = 0; attempt < 120; attempt += 1) {
    if (await pings()) return;
    await delay(500);
  }
  throw new Error(`dockerd did not answer within 60 s after a restart; see ${logFile}`);
}

async function stopDockerd(): Promise<void> {
  const pid = Number(readFileSync(pidFile, "utf8"));
  expect(alive(pid)).toBe(true);
  process.kill(pid, "SIGTERM");
  for (let attempt = 0; attempt < 240 && alive(pid); attempt += 1) await delay(250);
  expect(alive(pid), "dockerd did not stop within 60 s of SIGTERM").toBe(false);
}

describe("L3: dockerd restarted mid-run", () => {
  beforeAll(async () => {
    expect(await pings(), "dockerd must answer before the test restarts it").toBe(true);
    expect(existsSync(pidFile)).toBe(true);
  });
  afterAll(async () => {
    await startDockerd();
  }, 90_000);

  test(`${trials} trials: the run ends with an infrastructure error, never a success; the next run works`, async () => {
    const outcomes: string[] = [];
    for (let trial = 0; trial < trials; trial += 1) {
      const backend = trial % 2 === 0 ? "docker" : "gvisor";
      let marked: () => void = () => undefined;
      const running = new Promise<void>((resolve) => {
        marked = resolve;
      });
      const mark = tool(
        async () => {
          marked();
          return "marked";
        },
        { name: "mark", description: "Says the program is running.", schema: z.object({}) },
      );
      const agent = await buildAgent({
        model: new ScriptedChatModel([
          fenced("import time\nmark()\ntime.sleep(60)\nprint('RESULT: survived')"),
          fenced("print('RESULT: after the restart')"),
        ]),
        pattern: "code-action",
        sandbox: { backend, network: "none" },
        extraTools: [mark],
        codeAction: { execTimeout: 90, maxRepairs: 0 },
      });
      try {
        const turn = agent.invoke({ messages: [{ role: "user", content: "Wait." }] }).then(
          (result) => ({ ok: true as const, result }),
          (error: Error & { code?: string; attempts?: Array<{ status: string }> }) => ({
            ok: false as const,
            error,
          }),
        );
        await running;
        await stopDockerd();
        const outcome = await turn;
        expect(outcome.ok, `trial ${trial} (${backend}) succeeded although dockerd stopped`).toBe(false);
        if (!outcome.ok) {
          const seen = JSON.stringify(
            outcome.error.attempts?.map((attempt) => ({
              ...attempt,
              program: undefined,
              modelReply: undefined,
            })),
          ).slice(0, 2000);
          expect(outcome.error.name, `trial ${trial} (${backend}): ${outcome.error.message}\n${seen}`).toBe(
            "SandboxRunError",
          );
          expect(outcome.error.attempts?.map((attempt) => attempt.status)).toEqual(["infrastructure"]);
          outcomes.push(`${backend}: ${outcome.error.message.slice(0, 160)}`);
        }
        await startDockerd();
        const next = await agent.invoke({ messages: [{ role: "user", content: "Again." }] });
        expect(next.answer).toBe("after the restart");
      } finally {
        await startDockerd();
        await agent.close().catch(() => undefined);
      }
    }
    expect(await containersOfThisProcess()).toEqual([]);
    console.info(`[L3] ${outcomes.join("\n")}`);
  });
});
