import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// Approve later, across processes: each step is a process of its own that exits (the state in a file
// is all that passes between them), on the real engine.
const child = fileURLToPath(new URL("../support/durable-run-child.ts", import.meta.url));
const secret = randomBytes(32).toString("hex");
const folder = mkdtempSync(join(tmpdir(), "codeaction-durable-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

type Outcome = {
  status?: string;
  answer?: string;
  pending?: { sequence: number; tool: string; args: Record<string, unknown> };
  error?: string;
  code?: string;
  reason?: string;
  made?: { sequence: number; tool: string; args: string };
  logged?: { sequence: number; tool: string; args: string };
  message?: string;
  outcomes?: string[];
  warnings: string[];
  calls: { lookup: number; charge_card: number };
  containersAsked: number;
  containersLeft: number;
};

function runChild(args: string[], key = secret, env: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const process_ = spawn(process.execPath, [child, ...args], {
      env: { ...process.env, DURABLE_TEST_SECRET: key, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    process_.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    process_.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    process_.on("error", reject);
    process_.on("close", (code) => {
      const line = stdout.trim().split("\n").at(-1) ?? "";
      try {
        resolve(JSON.parse(line) as Outcome);
      } catch {
        reject(new Error(`the child exited with ${code} and printed no outcome:\n${stdout}\n${stderr}`));
      }
    });
  });
}

async function interrupted(program: "plain" | "timed"): Promise<string> {
  const stateFile = join(folder, `${program}-${randomBytes(4).toString("hex")}.json`);
  const first = await runChild(["interrupt", stateFile, program]);
  expect(first).toMatchObject({
    status: "interrupted",
    answer: "",
    pending: { sequence: 2, tool: "charge_card", args: { customer: "ada", amount: 42 } },
    calls: { lookup: 1, charge_card: 0 },
    containersAsked: 1,
    // The program was stopped and its container removed before invoke returned.
    containersLeft: 0,
  });
  return stateFile;
}

describe("approve later, resume in another process", () => {
  let stateFile = "";

  it("process 1: lookup runs, charge_card interrupts; the state is written and nothing is left running", async () => {
    stateFile = await interrupted("plain");
    const state = JSON.parse(readFileSync(stateFile, "utf8"));
    expect(state.callLog).toMatchObject([
      { sequence: 1, tool: "lookup", status: "ok", result: '{"customer":"ada","balance":42}' },
    ]);
    expect(state.signature).toMatch(/^[0-9a-f]{64}$/);
  });

  it("process 2, approved: lookup is answered from the log, charge_card is called once, the answer is right", async () => {
    const resumed = await runChild(["resume", stateFile, "true"]);
    expect(resumed).toMatchObject({
      status: "answered",
      answer: "r-ada-42",
      calls: { lookup: 0, charge_card: 1 },
      containersAsked: 1,
    });
  });

  it("process 2, denied: the program catches ToolDenied and answers; no tool is called", async () => {
    const resumed = await runChild([
      "resume",
      stateFile,
      JSON.stringify({ approved: false, reason: "over budget" }),
    ]);
    expect(resumed).toMatchObject({
      status: "answered",
      answer: "not charged: over budget",
      calls: { lookup: 0, charge_card: 0 },
    });
  });

  it("a state with one byte changed, or checked with another key, is refused before any container starts", async () => {
    const text = readFileSync(stateFile, "utf8");
    const changed = join(folder, "changed.json");
    // One byte: the logged balance the program would be told, 42 -> 43.
    writeFileSync(changed, text.replace('\\"balance\\":42', '\\"balance\\":43'));
    expect(readFileSync(changed, "utf8")).not.toBe(text);
    const forged = await runChild(["resume", changed, "true"]);
    expect(forged).toMatchObject({
      error: "ResumeStateError",
      code: "resume-state",
      reason: "bad-signature",
    });
    expect(forged).toMatchObject({ calls: { lookup: 0, charge_card: 0 }, containersAsked: 0 });

    const otherKey = await runChild(["resume", stateFile, "true"], randomBytes(32).toString("hex"));
    expect(otherKey).toMatchObject({
      error: "ResumeStateError",
      reason: "bad-signature",
      containersAsked: 0,
    });
    expect(otherKey.calls).toEqual({ lookup: 0, charge_card: 0 });
  });
});

describe("a state is resumed once (issue 45, Medium 5)", () => {
  it("two resumes of one state at once in one process: one runs, the other is refused; charge_card is made once", async () => {
    const stateFile = await interrupted("plain");
    const twice = await runChild(["resume-twice", stateFile, "true"]);
    expect(twice.outcomes).toEqual(["ResumeStateError: consumed", "answered"]);
    expect(twice.calls).toEqual({ lookup: 0, charge_card: 1 });
  });

  it("an agent without resumeSecret warns once, when it makes its first unsigned state", async () => {
    const stateFile = join(folder, "unsigned.json");
    const first = await runChild(["interrupt", stateFile, "plain"], secret, { DURABLE_TEST_NO_SECRET: "1" });
    expect(first.status).toBe("interrupted");
    expect(first.warnings).toHaveLength(1);
    expect(first.warnings[0]).toMatch(/^CODEACTION_UNSIGNED_STATE: .*no resumeSecret.*unsigned/);
    const signed = await runChild(["interrupt", join(folder, "signed.json"), "plain"]);
    expect(signed.warnings).toEqual([]);
  });
});

describe("a program whose calls depend on the time", () => {
  it("diverges on resume: a typed error names both calls, and no tool is called for real", async () => {
    const stateFile = await interrupted("timed");
    const resumed = await runChild(["resume", stateFile, "true"]);
    expect(resumed).toMatchObject({ error: "ReplayDivergenceError", code: "replay-diverged" });
    expect(resumed.logged).toMatchObject({ sequence: 2, tool: "charge_card" });
    expect(resumed.made).toMatchObject({ sequence: 2, tool: "charge_card" });
    expect(resumed.made?.args).not.toBe(resumed.logged?.args);
    expect(resumed.message).toContain(`charge_card(${resumed.made?.args}`);
    expect(resumed.calls).toEqual({ lookup: 0, charge_card: 0 });
    expect(resumed.containersLeft).toBe(0);
  });
});
