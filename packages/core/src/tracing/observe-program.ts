import type { CallbackManager } from "@langchain/core/callbacks/manager";
import type { ToolSpec } from "../tools/tool-spec.ts";
import type { ProgramObservation, RunObserver, StepInfo } from "./run-observer.ts";
import { type ToolCallTracker, trackToolCalls } from "./tool-runs.ts";

/**
 * One program as the run observes it: its execute_program span (with the sandbox's runtime and
 * whether its container came from the warm pool), and its tools wrapped so each call is a LangChain
 * tool run under `callbacks` and an execute_tool span under the program's span.
 */
export function observeProgram(
  observer: RunObserver,
  step: StepInfo & {
    program: string;
    session: { config: { runtime?: string } };
    callbacks: CallbackManager | undefined;
  },
  tools: ToolSpec[],
): { observed: ProgramObservation; tracker: ToolCallTracker } {
  const { session, callbacks, ...rest } = step;
  const observed = observer.program({ ...rest, ...describeSession(session) });
  const tracker = trackToolCalls(tools, callbacks, {
    spans: observer.spans,
    parent: observed.span,
    observer,
  });
  return { observed, tracker };
}

/** The sandbox facts a program span carries: the container runtime, and whether the container came from the warm pool. */
function describeSession(session: { config: { runtime?: string } }): { runtime: string; warm: boolean } {
  // A pooled session (the warm pool's) is the only kind that says whether it is still warm.
  return { runtime: session.config.runtime ?? "engine default", warm: "warmAndAlive" in session };
}
