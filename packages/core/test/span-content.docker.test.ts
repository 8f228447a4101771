import { tool } from "@langchain/core/tools";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { AttemptsExhaustedError, buildAgent } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { programReply } from "./helpers.ts";
import { recordSpansInMemory } from "./otel-setup.ts";

// Issue 45 #6: without recordContent no span carries content. Secrets are planted in a tool's
// arguments, a tool's result, a tool's error message and the program's output (and so in the
// program, the run's error and its last output); every span's name, attributes, events, event
// attributes, links and status message are searched for them. With recordContent they are there:
// the search finds what it looks for.

const exporter = recordSpansInMemory();

const secrets = {
  argument: "ARGUMENT-SECRET-4111",
  result: "RESULT-SECRET-7d2e",
  toolError: "TOOL-ERROR-SECRET-93b1",
  output: "OUTPUT-SECRET-5c0f",
};

const readToken = tool(async () => ({ token: secrets.result }), {
  name: "read_token",
  description: "The account's token.",
  schema: z.object({}),
});
const chargeCard = tool(
  async ({ card }: { card: string }) => {
    throw new Error(`card ${card} declined (${secrets.toolError})`);
  },
  { name: "charge_card", description: "Charge a card.", schema: z.object({ card: z.string() }) },
);

const program = [
  "from codeaction_tools import read_token, charge_card",
  "token = read_token()",
  "try:",
  `    charge_card(card="${secrets.argument}")`,
  "except Exception as error:",
  '    print("charge failed:", error)',
  `raise RuntimeError(f"{token} ${secrets.output}")`,
].join("\n");

/** Every text a span exposes to an exporter. */
function textsOf(span: ReadableSpan): string[] {
  const values = (attributes: Record<string, unknown>) =>
    Object.entries(attributes).flatMap(([key, value]) => [key, JSON.stringify(value)]);
  return [
    span.name,
    ...values(span.attributes),
    ...span.events.flatMap((event) => [event.name, ...values(event.attributes ?? {})]),
    ...span.links.flatMap((link) => values(link.attributes ?? {})),
    span.status.message ?? "",
  ];
}

async function failedRun(tracing?: { recordContent: boolean }) {
  const model = new ScriptedChatModel([programReply(program)]);
  await using agent = await buildAgent({
    model,
    pattern: "code-action",
    sandbox: { pool: 0 },
    extraTools: [readToken, chargeCard],
    codeAction: { maxRepairs: 0 },
    ...(tracing ? { tracing } : {}),
  });
  const error = await agent.invoke("Charge the card.").catch((caught: unknown) => caught);
  expect(AttemptsExhaustedError.isInstance(error)).toBe(true);
  // The planted secrets reached the run: its error carries the program's last output.
  expect(String((error as Error).message)).toContain(secrets.output);
  expect(String((error as Error).message)).toContain(secrets.result);
  return exporter.getFinishedSpans();
}

function secretsIn(spans: ReadableSpan[]): string[] {
  const texts = spans.flatMap(textsOf);
  return Object.values(secrets).filter((secret) => texts.some((text) => text.includes(secret)));
}

describe("spans carry no content without recordContent (official SDK, real engine)", () => {
  test("no planted secret in any span, event, event attribute or status; failures carry their type", async () => {
    const spans = await failedRun();
    expect(spans.map((span) => span.name)).toEqual(
      expect.arrayContaining([
        "invoke_agent codeaction",
        "execute_tool read_token",
        "execute_tool charge_card",
      ]),
    );
    expect(secretsIn(spans)).toEqual([]);
    const failed = spans.filter((span) => span.status.code === 2);
    expect(failed.map((span) => span.name)).toEqual(
      expect.arrayContaining(["invoke_agent codeaction", "execute_tool charge_card"]),
    );
    for (const span of failed) {
      expect(span.status.message).toBe(span.attributes["error.type"]);
      expect(span.events.map((event) => Object.keys(event.attributes ?? {}))).toEqual([["exception.type"]]);
    }
  });

  test("with recordContent the same search finds every secret", async () => {
    const spans = await failedRun({ recordContent: true });
    expect(secretsIn(spans).sort()).toEqual(Object.values(secrets).sort());
  });
});
