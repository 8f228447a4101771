import { randomBytes } from "node:crypto";
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { bridgeDefaults } from "../bridge/bridge-options.ts";
import { CallGate } from "../bridge/call-gate.ts";
import type { CallLogEntry } from "../durable/call-log.ts";
import { type PendingCall, type RunState, type StateMessage, signState } from "../durable/run-state.ts";
import { InterruptRefusedError } from "../errors/interrupt-refused-error.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import type { InterruptedResult } from "../types.ts";
import type { GateStopped, ResumePlan } from "./stopped-run.ts";
import type { TurnContext } from "./turn-context.ts";
import { textOf } from "./turn-messages.ts";

/** The attempt's written program and where it stands, for its gate. */
type Written = {
  attempt: RunState["attempt"];
  modelMessages: BaseMessage[];
  resume?: ResumePlan | undefined;
  /** With steps: where the run stands (the state's `steps`), asked when the gate stops. */
  steps?: (() => RunState["steps"]) | undefined;
};

/**
 * The call gate of one attempt's program: its calls logged; a resumed attempt's answered from its
 * log. When the gate stops the run, the turn is aborted with what stopped it kept on the context.
 */
export function openCallGate(context: TurnContext, written: Written, tools: ToolSpec[]): CallGate {
  const { options } = context;
  const { resume } = written;
  const gate: CallGate = new CallGate({
    runId: context.runId,
    tools,
    approval: options.approval,
    maxResultBytes: options.settings.maxResultBytes ?? bridgeDefaults.maxResponseBytes,
    ...(resume ? { logged: resume.logged, pending: resume.pending } : {}),
    refuseInterrupt: (pending, log) => interruptRefusal(context, written.attempt, pending, log),
    stop: (stop) => {
      context.stopped ??= {
        stop,
        attempt: written.attempt,
        modelMessages: [...written.modelMessages],
        callLog: () => gate.log.entries(),
        ...(written.steps ? { steps: written.steps() } : {}),
      };
      context.abort(
        stop.kind !== "interrupt"
          ? stop.error
          : new Error(`the run was interrupted before ${stop.pending.tool}`),
      );
    },
  });
  return gate;
}

/**
 * Why an interrupt here could not be resumed, or undefined when it can. With several samples, each
 * program is one of several that must agree, and a state holds one program: resuming it alone would
 * skip the agreement (the escalation's program decides alone, so it may wait). A call before the
 * pending one whose result the log kept only as a digest could not be answered on resume.
 */
function interruptRefusal(
  context: TurnContext,
  attempt: RunState["attempt"],
  pending: PendingCall,
  log: CallLogEntry[],
): InterruptRefusedError | undefined {
  const { runId } = context;
  const samples = context.options.settings.samples;
  const call = `${pending.tool} (call ${pending.sequence})`;
  if (samples > 1 && !attempt.escalated) {
    return new InterruptRefusedError({
      runId,
      reason: "samples",
      pending,
      message: `The approval hook answered "interrupt" for ${call}, but this agent runs codeAction.samples: ${samples} programs that must agree, and an interrupted run resumes one program, so it cannot wait for a decision. The call was not made and the run was stopped. Build the agent that may interrupt with samples: 1, or have the hook answer true or false for this call.`,
    });
  }
  const unkept = log.find(
    (entry) => entry.sequence < pending.sequence && entry.status === "ok" && entry.result === undefined,
  );
  if (unkept) {
    return new InterruptRefusedError({
      runId,
      reason: "result-not-kept",
      pending,
      message: `The approval hook answered "interrupt" for ${call}, but call ${unkept.sequence} (${unkept.tool}) returned ${unkept.resultRef?.bytes ?? "?"} bytes, more than the call log keeps (1 MiB a result, 8 MiB a run), so a resumed program could not be answered from the log. The call was not made and the run was stopped. Have ${unkept.tool} return less (filter, page or aggregate), or have the hook answer true or false for this call.`,
    });
  }
  return undefined;
}

/** The result of a turn an approval hook interrupted: its state signed, its containers already gone. */
export function interruptedResult(
  context: TurnContext,
  stopped: GateStopped & { stop: { kind: "interrupt" } },
  started: number,
): InterruptedResult {
  const { runId, options } = context;
  const { pending } = stopped.stop;
  if (options.resumeSecret === undefined) warnUnsignedOnce();
  const state = signState(
    {
      format: "codeaction.run-state",
      version: 1,
      runId,
      nonce: randomBytes(16).toString("hex"),
      seed: context.seed,
      messages: context.messages.map(stateMessage),
      modelMessages: stopped.modelMessages.map(stateMessage),
      attempt: stopped.attempt,
      callLog: stopped.callLog().filter((entry) => entry.sequence < pending.sequence),
      pending,
      settings: {
        execTimeout: options.settings.execTimeout,
        maxToolCalls: options.settings.maxToolCalls,
        maxRepairs: options.settings.maxRepairs,
        ...(options.settings.maxResultBytes === undefined
          ? {}
          : { maxResultBytes: options.settings.maxResultBytes }),
      },
      tools: { names: options.tools.map((tool) => tool.name), digest: context.stubsDigest },
      ...(stopped.steps ? { steps: stopped.steps } : {}),
    },
    options.resumeSecret,
  );
  const attempts = [...context.attempts];
  return {
    messages: [...context.messages],
    runId,
    pattern: "code-action",
    status: "interrupted",
    answer: "",
    structured: undefined as never,
    interrupt: { runId, pending, state },
    __interrupt__: [{ id: runId, value: { runId, pending } }],
    attempts,
    toolCalls: attempts.flatMap((attempt) => attempt.toolCalls),
    usage: context.observer.usage(),
    files: [],
    refusedFiles: [],
    timings: { totalMs: Math.round(performance.now() - started) },
  };
}

let warnedUnsigned = false;

/** Once a process: an agent without resumeSecret made a state no resume will trust without opting out. */
function warnUnsignedOnce(): void {
  if (warnedUnsigned) return;
  warnedUnsigned = true;
  process.emitWarning(
    "codeaction: this agent has no resumeSecret, so the states of its interrupted runs are unsigned: agent.resume() refuses them unless told { trustUnsignedState: true }, and nothing shows whether a stored state was changed. Build the agent with buildAgent({ resumeSecret }) (32 random bytes, e.g. `openssl rand -hex 32`).",
    { code: "CODEACTION_UNSIGNED_STATE" },
  );
}

function stateMessage(message: BaseMessage): StateMessage {
  const type = message.getType();
  const role = type === "system" ? "system" : type === "ai" ? "assistant" : "user";
  return { role, content: textOf(message.content) };
}

/** A state's messages as LangChain messages again. */
export function fromStateMessages(messages: StateMessage[]): BaseMessage[] {
  return messages.map((message) =>
    message.role === "system"
      ? new SystemMessage(message.content)
      : message.role === "assistant"
        ? new AIMessage(message.content)
        : new HumanMessage(message.content),
  );
}
