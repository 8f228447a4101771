import type { Agent, AgentEvent, AgentResult } from "@codeaction/core";
import { describe, expect, it } from "vitest";
import type { CliContext } from "../context.ts";
import { createProgress } from "./progress.ts";
import { runTurn } from "./turn-events.ts";

// runTurn reads the agent's stream to its end: the answer is its last event; what fails before the
// answer is the turn's failure, and what fails after it (closing the turn's run) does not take it.

const answer = { runId: "run_1", answer: "42", status: "answered" } as unknown as AgentResult;

/** An agent whose stream yields `events` and then, if given, throws `after`. */
function agentStreaming(events: AgentEvent[], after?: Error): Agent {
  return {
    pattern: "code-action",
    stream: async () =>
      (async function* () {
        yield* events;
        if (after) throw after;
      })(),
  } as unknown as Agent;
}

function options() {
  const context = { stderr: process.stderr, stdout: process.stdout } as unknown as CliContext;
  return {
    progress: createProgress({ stream: process.stderr, quiet: true }),
    context,
    showProgram: false,
    verbose: false,
    callOptions: {},
    image: "codeaction/python:3.11",
  };
}

describe("runTurn", () => {
  it("returns the answer once the stream has ended", async () => {
    const agent = agentStreaming([{ type: "answer", runId: "run_1", result: answer }]);
    expect(await runTurn(agent, "q", options())).toBe(answer);
  });

  it("keeps the answer when the stream fails after it", async () => {
    const agent = agentStreaming(
      [{ type: "answer", runId: "run_1", result: answer }],
      new Error("a callback handler failed closing the run"),
    );
    expect(await runTurn(agent, "q", options())).toBe(answer);
  });

  it("fails with the stream's error when it fails before an answer", async () => {
    const agent = agentStreaming([], new Error("the model failed"));
    await expect(runTurn(agent, "q", options())).rejects.toThrow("the model failed");
  });
});
