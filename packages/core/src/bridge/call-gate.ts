import {
  type CallEnding,
  type CallLogEntry,
  type CallLogLimits,
  CallLogRecorder,
  type LoggedCall,
  loggedCall,
} from "../durable/call-log.ts";
import type { PendingCall, ResumeDecision } from "../durable/run-state.ts";
import type { InterruptRefusedError } from "../errors/interrupt-refused-error.ts";
import { ReplayDivergenceError } from "../errors/replay-divergence-error.ts";
import { askApproval, denialOf } from "../tools/approval.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { encodeToolValue } from "../tools/tool-value.ts";
import { jsonBytesAtLeast } from "../tools/tool-value-size.ts";
import type { ApprovalHook, ApprovalRequest } from "../types.ts";
import { EncodedToolResult } from "./encoded-tool-result.ts";
import { errorMessage, resultTooLarge } from "./tool-calls.ts";

/**
 * Why a gate stopped its run: an approval hook answered "interrupt", the program left its log, or
 * the hook answered "interrupt" in a run that could not be resumed.
 */
export type GateStop =
  | { kind: "interrupt"; pending: PendingCall }
  | { kind: "diverged"; error: ReplayDivergenceError }
  | { kind: "refused"; error: InterruptRefusedError };

export type CallGateOptions = {
  runId: string;
  tools: readonly ToolSpec[];
  approval?: ApprovalHook | undefined;
  /** Resume and replay: calls answered from this log, matched by sequence, tool and arguments. */
  logged?: readonly CallLogEntry[];
  /** Resume: the call that interrupted the run, and the decision it now gets. */
  pending?: { call: PendingCall; decision: ResumeDecision };
  /** Replay: a call the log does not hold is a difference; nothing runs live. */
  offline?: boolean;
  /** The bridge's limit on a result (codeAction.maxResultBytes). */
  maxResultBytes: number;
  limits?: Partial<CallLogLimits>;
  /**
   * Why this run could not be resumed from a state if the hook answered "interrupt" now (given the
   * pending call and the log so far): the run is then stopped with this error instead.
   */
  refuseInterrupt?: (pending: PendingCall, log: CallLogEntry[]) => InterruptRefusedError | undefined;
  /** Stops the run: the program is killed, and the turn reports why. Called at most once. */
  stop: (reason: GateStop) => void;
};

/** How one call that passed the gate's approval is answered: from the log, or by the tool. */
type Plan = { sequence: number; call: LoggedCall; started: number; logged?: CallLogEntry };

/**
 * The call log's seam in the bridge, one per program run: an approval hook and tools that wrap the
 * agent's own. Every call that reaches approval gets the next sequence number and is logged with how
 * it ended. Calls the log already holds are answered from it (never reaching the hook or the tool);
 * a call that differs from its logged one stops the run (ReplayDivergenceError) before it reaches
 * anything. The bridge hands approval and the tool the same AbortSignal for one call: that is how a
 * call's approval and its invocation are matched here.
 */
export class CallGate {
  readonly log: CallLogRecorder;
  readonly tools: ToolSpec[];
  readonly #options: CallGateOptions;
  readonly #logged: Map<number, CallLogEntry>;
  readonly #plans = new WeakMap<AbortSignal, Plan>();
  #sequence = 0;
  #stopped = false;

  constructor(options: CallGateOptions) {
    this.#options = options;
    this.log = new CallLogRecorder(options.limits);
    this.#logged = new Map((options.logged ?? []).map((entry) => [entry.sequence, entry]));
    for (const entry of this.#logged.values()) this.log.adopt(entry);
    this.tools = options.tools.map((tool) => this.#wrap(tool));
  }

  /** The bridge's approval hook: sequence, log, the caller's hook, interrupts and differences. */
  readonly approval: ApprovalHook = async (request) => {
    const sequence = ++this.#sequence;
    const call = loggedCall(request.tool, request.args);
    const plan: Plan = { sequence, call, started: performance.now() };
    if (this.#stopped) return this.#holdUntilEnd(request);
    const logged = this.#logged.get(sequence);
    const pending = this.#options.pending;
    if (logged || pending?.call.sequence === sequence) {
      const expected = logged ?? loggedCall(pending!.call.tool, pending!.call.args);
      if (expected.tool !== call.tool || expected.argsDigest !== call.argsDigest) {
        return this.#diverge(request, plan, logged ?? { ...pending!.call });
      }
      if (logged) return this.#answerFromLog(request, plan, logged);
      return this.#decidePending(request, plan, pending!.decision);
    }
    if (this.#options.offline) return this.#diverge(request, plan, undefined);
    return this.#ask(request, plan);
  };

  async #ask(request: ApprovalRequest, plan: Plan) {
    const hook = this.#options.approval;
    if (!hook) return this.#approve(request, plan);
    const answer = await askApproval(hook, request);
    if (answer === "interrupt" || (typeof answer === "object" && answer !== null && "interrupt" in answer)) {
      const reason = typeof answer === "object" ? answer.reason : undefined;
      const pending: PendingCall = {
        sequence: plan.sequence,
        tool: request.tool,
        args: JSON.parse(plan.call.argsText),
        ...(reason ? { reason } : {}),
      };
      const refusal = this.#options.refuseInterrupt?.(pending, this.log.entries());
      this.#stop(refusal ? { kind: "refused", error: refusal } : { kind: "interrupt", pending });
      return this.#holdUntilEnd(request);
    }
    return this.#decide(request, plan, answer);
  }

  /**
   * The resumed run's pending call: a denial is final; an approval must also pass this agent's own
   * hook (asked with `resumeDecision: "approved"`): a decision cannot approve what the resuming
   * agent's policy denies. The hook's "interrupt" or true leaves the decision as it is.
   */
  async #decidePending(request: ApprovalRequest, plan: Plan, decision: ResumeDecision) {
    const hook = this.#options.approval;
    if (!hook || denialOf(request.tool, decision) !== undefined) return this.#decide(request, plan, decision);
    const answer = await askApproval(hook, { ...request, resumeDecision: "approved" });
    if (answer === "interrupt" || (typeof answer === "object" && "interrupt" in answer)) {
      return this.#decide(request, plan, decision);
    }
    return this.#decide(request, plan, answer);
  }

  #decide(request: ApprovalRequest, plan: Plan, decision: ResumeDecision) {
    const denial = denialOf(request.tool, decision);
    return denial === undefined ? this.#approve(request, plan) : this.#deny(plan, denial);
  }

  #approve(request: ApprovalRequest, plan: Plan) {
    if (request.signal) this.#plans.set(request.signal, plan);
    return true;
  }

  #deny(plan: Plan, reason: string) {
    this.#end(plan, { status: "denied", error: reason });
    return { approved: false, reason };
  }

  #answerFromLog(request: ApprovalRequest, plan: Plan, logged: CallLogEntry) {
    if (logged.status === "denied") return { approved: false, reason: logged.error ?? "" };
    plan.logged = logged;
    return this.#approve(request, plan);
  }

  #diverge(
    request: ApprovalRequest,
    plan: Plan,
    logged: Pick<CallLogEntry, "sequence" | "tool" | "args"> | undefined,
  ) {
    const made = { sequence: plan.sequence, tool: request.tool, args: cut(plan.call.argsText) };
    const error = new ReplayDivergenceError({
      runId: this.#options.runId,
      made,
      logged: logged && {
        sequence: logged.sequence,
        tool: logged.tool,
        args: cut(JSON.stringify(logged.args ?? "…")),
      },
    });
    this.#stop({ kind: "diverged", error });
    return this.#holdUntilEnd(request);
  }

  #stop(reason: GateStop): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#options.stop(reason);
  }

  /** An answer that never comes: the run is being stopped, and the bridge answers nothing once it ends. */
  #holdUntilEnd(request: ApprovalRequest): Promise<boolean> {
    const signal = request.signal;
    if (!signal) return Promise.resolve(false);
    return new Promise((resolve) => {
      if (signal.aborted) resolve(false);
      else signal.addEventListener("abort", () => resolve(false), { once: true });
    });
  }

  #end(plan: Plan, ending: CallEnding): void {
    this.log.record(plan.sequence, plan.call, ending, performance.now() - plan.started);
  }

  /** The tool as the bridge sees it: answered from the log when planned so, else run and logged. */
  #wrap(tool: ToolSpec): ToolSpec {
    const invoke: ToolSpec["invoke"] = async (args, context) => {
      const plan = context.signal ? this.#plans.get(context.signal) : undefined;
      if (plan?.logged) return answerFromLog(plan.logged);
      if (!plan) return tool.invoke(args, context);
      let value: unknown;
      try {
        value = await tool.invoke(args, context);
      } catch (error) {
        this.#end(plan, { status: "error", error: errorMessage(error) });
        throw error;
      }
      return this.#encode(tool.name, plan, value);
    };
    return { ...tool, invoke };
  }

  /** Encodes a live result once, for the log and for the program (the bridge sends it as it is). */
  #encode(tool: string, plan: Plan, value: unknown): unknown {
    const limit = this.#options.maxResultBytes;
    const atLeast = jsonBytesAtLeast(value, limit);
    if (atLeast > limit) {
      this.#end(plan, { status: "error", error: resultTooLarge(tool, `at least ${atLeast}`, limit) });
      return value;
    }
    let encoded: ReturnType<typeof encodeToolValue>;
    try {
      encoded = encodeToolValue(value, tool);
    } catch (error) {
      this.#end(plan, { status: "error", error: errorMessage(error) });
      throw error;
    }
    const bytes = Buffer.byteLength(encoded.text);
    if (bytes > limit)
      this.#end(plan, { status: "error", error: resultTooLarge(tool, String(bytes), limit) });
    else this.#end(plan, { status: "ok", text: encoded.text });
    return new EncodedToolResult(encoded.text, encoded.record);
  }
}

/** A logged call's answer again: its exact JSON text, or its error. */
function answerFromLog(entry: CallLogEntry): unknown {
  if (entry.status === "ok" && entry.result !== undefined) {
    return new EncodedToolResult(entry.result, recordOf(entry.result));
  }
  throw new Error(entry.error ?? `call ${entry.sequence} (${entry.tool}) has no logged result`);
}

/** The JSON-safe copy records keep of a logged result (its text when it is not plain JSON: NaN, big ints). */
function recordOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function cut(text: string): string {
  return text.length <= 500 ? text : `${text.slice(0, 500)}…`;
}
