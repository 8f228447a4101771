import type { BaseMessage } from "@langchain/core/messages";
import type { GateStop } from "../bridge/call-gate.ts";
import type { CallLogEntry } from "../durable/call-log.ts";
import type { PendingCall, ResumeDecision, RunState } from "../durable/run-state.ts";

/** A resumed sample's first attempt: the reply that held its program, and the log its calls are answered from. */
export type ResumePlan = {
  attempt: number;
  /** With steps: the step the interrupted attempt belongs to. */
  step?: number;
  reply: string;
  logged: CallLogEntry[];
  pending: { call: PendingCall; decision: ResumeDecision };
};

/** What a call gate stopped a turn for, and what the interrupted state is made of. */
export type GateStopped = {
  stop: GateStop;
  attempt: RunState["attempt"];
  /** The sample's messages to the model before the attempt's reply. */
  modelMessages: BaseMessage[];
  callLog: () => CallLogEntry[];
  /** With steps: the interrupted step and the history before it (RunState.steps). */
  steps?: RunState["steps"];
};
