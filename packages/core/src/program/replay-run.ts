import { type SandboxConfigInput, SandboxManager, type SandboxSession } from "@codeaction/sandbox";
import type { GateStop } from "../bridge/call-gate.ts";
import { seededStubs } from "../durable/determinism.ts";
import type { RunRecord } from "../durable/run-record.ts";
import { ResumeStateError } from "../errors/resume-state-error.ts";
import { LiveInterpreter } from "../steps/live-interpreter.ts";
import { offlineGate, reexecuteHistory } from "../steps/reexecute.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { createCodeActionSandbox } from "./code-action-sandbox.ts";
import { type ProgramRun, runProgram } from "./run-program.ts";

/** Options of `replayRun`. */
export type ReplayOptions = {
  /** Where the program runs: a SandboxManager (used, not closed) or settings (default: no network, no pool). */
  sandbox?: SandboxManager | SandboxConfigInput;
  /** Seconds the program may run (default 120). */
  execTimeout?: number;
};

/** What a replay found: the same calls and RESULT, or the first difference. */
export type ReplayReport =
  | { status: "reproduced"; runId: string; result: string; calls: number }
  | {
      status: "differs";
      runId: string;
      /** The first difference, in words: the call (both sides named), the number of calls, or the RESULT. */
      difference: string;
      /** "call": a call differs from the log at `sequence`; "calls": fewer calls; "result": another RESULT or none. */
      kind: "call" | "calls" | "result";
      sequence?: number;
      run: Pick<ProgramRun, "status" | "exitCode" | "stdout" | "stderr" | "result">;
    };

/**
 * Re-executes a recorded run's program in a fresh sandbox with every tool call answered from its
 * log: no model, no tool, nothing live. Reports "reproduced" (the same calls in the same order with
 * the same arguments, and the same RESULT) or the first difference. A record from a run against live
 * tools is a deterministic test fixture this way (docs/durable-runs.md).
 */
export async function replayRun(record: RunRecord, options: ReplayOptions = {}): Promise<ReplayReport> {
  checkRecord(record);
  const manager =
    options.sandbox instanceof SandboxManager
      ? options.sandbox
      : createCodeActionSandbox({ network: "none", pool: 0, ...options.sandbox });
  const owned = manager !== options.sandbox;
  let session: SandboxSession | undefined;
  try {
    await manager.ready();
    session = await manager.createSession();
    return await replayIn(session, record, options.execTimeout ?? 120);
  } finally {
    await session?.close();
    if (owned) await manager.close();
  }
}

async function replayIn(
  session: SandboxSession,
  record: RunRecord,
  execTimeout: number,
): Promise<ReplayReport> {
  const stubsSource = seededStubs(record.stubs, record.seed);
  if (!record.steps?.length) {
    return replayAnswering(record, execTimeout, (options) =>
      runProgram({ ...options, session, stubsSource }),
    );
  }
  // With steps: the earlier programs re-executed in one interpreter (the same calls, the same ends),
  // then the answering program in it.
  const interpreter = new LiveInterpreter(session, {});
  const refused = await reexecuteHistory(interpreter, {
    history: record.steps,
    tools: toolsOf(record),
    stubsSource,
    runId: record.runId,
    execTimeout,
  });
  if (refused !== undefined) {
    return {
      status: "differs",
      runId: record.runId,
      kind: "call",
      difference: `an earlier step did not replay: ${refused}`,
      run: { status: "error", exitCode: null, stdout: "", stderr: "" },
    };
  }
  return replayAnswering(record, execTimeout, (options) => interpreter.run({ ...options, stubsSource }));
}

type AnsweringRun = Pick<
  Parameters<typeof runProgram>[0],
  "program" | "tools" | "approval" | "runId" | "execTimeout" | "maxToolCalls" | "signal"
>;

/** The record's answering program run by `run`, every call from its log, and compared with the record. */
async function replayAnswering(
  record: RunRecord,
  execTimeout: number,
  run: (options: AnsweringRun) => Promise<ProgramRun>,
): Promise<ReplayReport> {
  const controller = new AbortController();
  let stopped: GateStop | undefined;
  const gate = offlineGate(record.runId, toolsOf(record), record.callLog, (stop) => {
    stopped = stop;
    controller.abort(stop.kind === "diverged" ? stop.error : new Error("interrupt"));
  });
  const ran = await run({
    program: record.program,
    tools: gate.tools,
    approval: gate.approval,
    runId: record.runId,
    execTimeout,
    maxToolCalls: Math.max(50, record.callLog.length + 1),
    signal: controller.signal,
  });
  return compareReplay(record, ran, gate.log.entries().length, stopped);
}

/** "reproduced", or the first difference between a replayed run and its record. */
function compareReplay(
  record: RunRecord,
  run: Awaited<ReturnType<typeof runProgram>>,
  made: number,
  stopped: GateStop | undefined,
): ReplayReport {
  const seen = {
    status: run.status,
    exitCode: run.exitCode,
    stdout: run.stdout,
    stderr: run.stderr,
    result: run.result,
  };
  const base = { status: "differs" as const, runId: record.runId, run: seen };
  if (stopped?.kind === "diverged") {
    return {
      ...base,
      kind: "call",
      sequence: stopped.error.made.sequence,
      difference: stopped.error.message,
    };
  }
  if (made < record.callLog.length) {
    const difference = `the program made ${made} call(s); the log holds ${record.callLog.length} (the first not made: ${record.callLog[made]?.tool})`;
    return { ...base, kind: "calls", sequence: made + 1, difference };
  }
  if (run.status !== "ok" || run.result !== record.result) {
    const printed =
      run.result === undefined
        ? `no RESULT (the run ended "${run.status}")`
        : `RESULT ${JSON.stringify(run.result)}`;
    return {
      ...base,
      kind: "result",
      difference: `the program printed ${printed}; the record says ${JSON.stringify(record.result)}`,
    };
  }
  return { status: "reproduced", runId: record.runId, result: run.result, calls: made };
}

/** Tools with the recorded names that never run: every call is answered from the log or stopped. */
function toolsOf(record: RunRecord): ToolSpec[] {
  const names = new Set([...(record.tools ?? []), ...record.callLog.map((entry) => entry.tool)]);
  return [...names].map((name) => ({
    name,
    description: "",
    origin: "replay",
    inputSchema: { type: "object" },
    invoke: () => Promise.reject(new Error(`${name} is not called in a replay`)),
  }));
}

function checkRecord(record: RunRecord): void {
  if (
    record?.format !== "codeaction.run-record" ||
    record.version !== 1 ||
    typeof record.program !== "string"
  ) {
    throw new ResumeStateError({
      reason: "malformed",
      message:
        "replayRun: this is not a run record (format codeaction.run-record, version 1). Make one with recordRun(result, agent.tools).",
    });
  }
  const missing = record.callLog.find((entry) => entry.status === "ok" && entry.result === undefined);
  if (missing) {
    throw new ResumeStateError({
      reason: "unavailable",
      message: `replayRun: call ${missing.sequence} (${missing.tool}) returned ${missing.resultRef?.bytes ?? "?"} bytes, more than the call log copies, so only its digest was kept; this run cannot be replayed.`,
    });
  }
}
