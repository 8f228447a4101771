// Tracing with a callback handler: the turn is one chain run; each attempt is a child chain run
// holding its model call (an LLM run) and its tool calls (tool runs). Any LangChain handler works:
// LangSmith's and Langfuse's too. Run: node examples/langchain/callback-handler.ts
import { buildAgent } from "@codeaction/core";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import { tool } from "@langchain/core/tools";
import type { ChainValues } from "@langchain/core/utils/types";
import { z } from "zod";
import { exampleModel } from "../model.ts";

/** Prints each run as it starts, indented under its parent. */
class RunTreePrinter extends BaseCallbackHandler {
  name = "run-tree-printer";
  readonly #depths = new Map<string, number>();

  constructor() {
    super({ _awaitHandler: true });
  }

  #print(kind: string, name: string, runId: string, parentRunId?: string) {
    const depth = parentRunId === undefined ? 0 : (this.#depths.get(parentRunId) ?? 0) + 1;
    this.#depths.set(runId, depth);
    console.log(`${"  ".repeat(depth)}${kind} ${name}`);
  }

  // The order in which @langchain/core passes a chain run's fields (its runName comes last).
  override handleChainStart(
    chain: Serialized,
    _inputs: ChainValues,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ) {
    this.#print("chain", runName ?? String(chain.id.at(-1)), runId, parentRunId);
  }

  override handleChatModelStart(model: Serialized, _messages: unknown, runId: string, parentRunId?: string) {
    this.#print("llm", String(model.id.at(-1)), runId, parentRunId);
  }

  override handleToolStart(
    tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
  ) {
    this.#print("tool", `${runName ?? String(tool.id.at(-1))} ${input}`, runId, parentRunId);
  }
}

const exchangeRate = tool(async ({ currency }: { currency: string }) => (currency === "EUR" ? 0.92 : 1), {
  name: "exchange_rate",
  description: "How many units of `currency` one US dollar buys.",
  schema: z.object({ currency: z.string().describe("An ISO 4217 code such as EUR.") }),
});

const agent = await buildAgent({
  model: await exampleModel("langchain-callbacks"),
  pattern: "code-action",
  extraTools: [exchangeRate],
});
try {
  const result = await agent.invoke("What is 250 US dollars in euros?", {
    callbacks: [new RunTreePrinter()],
    runName: "currency-desk",
    tags: ["example"],
  });
  console.log(`answer: ${result.answer}`);
} finally {
  await agent.close();
}
