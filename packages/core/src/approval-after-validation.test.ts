import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { runLocally } from "../test/local-relay.ts";
import { renderStubsModule } from "./prompt/python-stubs.ts";
import { ScriptedChatModel } from "./testing/index.ts";
import { fromLangChainTool } from "./tools/from-langchain.ts";
import { createToolsRunner } from "./tools-pattern/runner.ts";
import type { ApprovalHook, ApprovalRequest } from "./types.ts";

// A person must never be asked to approve a call that could never run: the arguments are checked
// against the tool's own schema first, and only a call that passes reaches the approval hook.

function ordersTool() {
  const runs: unknown[] = [];
  const spec = fromLangChainTool(
    tool(
      async (args) => {
        runs.push(args);
        return [{ order_id: "O-1" }];
      },
      {
        name: "load_orders",
        description: "Orders of one country since a date.",
        schema: z.object({ limit: z.number().int(), country: z.enum(["US", "DE"]), since: z.iso.date() }),
      },
    ),
  );
  return { spec, runs };
}

function countingHook(): { hook: ApprovalHook; asked: ApprovalRequest[] } {
  const asked: ApprovalRequest[] = [];
  return {
    asked,
    hook: (request) => {
      asked.push(request);
      return true;
    },
  };
}

const invalidCalls = [
  { limit: "ten", country: "US", since: "2026-07-01" },
  { limit: 10, country: "XX", since: "2026-07-01" },
  { limit: 10, country: "US", since: "last tuesday" },
];
const validCall = { limit: 10, country: "DE", since: "2026-07-01" };

describe("arguments are validated before the approval hook is asked", () => {
  test("tools pattern: three invalid calls are refused without asking; the valid one is asked once and runs", async () => {
    const { spec, runs } = ordersTool();
    const { hook, asked } = countingHook();
    const model = new ScriptedChatModel([
      ...[...invalidCalls, validCall].map((args) => ({ toolCalls: [{ name: "load_orders", args }] })),
      "done",
    ]);
    const runner = createToolsRunner({ model, tools: [spec], approval: hook });
    let result: { toolCalls: { status: string; error?: string }[] } | undefined;
    for await (const event of runner.stream([new HumanMessage("orders?")], "run-v")) {
      if (event.type === "answer") result = event.result;
    }
    expect(asked.map((request) => request.args)).toEqual([validCall]);
    expect(runs).toEqual([validCall]);
    expect(result?.toolCalls.map((call) => call.status)).toEqual(["invalid", "invalid", "invalid", "ok"]);
    expect(result?.toolCalls[0]?.error).toContain("limit");
    expect(result?.toolCalls[1]?.error).toContain("country");
    expect(result?.toolCalls[2]?.error).toContain("since");
  });

  test("code-action bridge: a program's invalid calls are refused without asking; the valid one is asked once", async () => {
    const { spec, runs } = ordersTool();
    const { hook, asked } = countingHook();
    const run = await runLocally({
      program: `
out = []
for args in ${JSON.stringify(invalidCalls)}:
    try:
        load_orders(**args)
    except ToolError as error:
        out.append(type(error).__name__)
out.append(load_orders(**${JSON.stringify(validCall)})[0]["order_id"])
print("RESULT:", out)
`,
      stubsSource: renderStubsModule([spec]),
      tools: [spec],
      runId: "run-bridge",
      approval: hook,
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(run.result).toBe("['ToolError', 'ToolError', 'ToolError', 'O-1']");
    expect(asked.map((request) => request.args)).toEqual([validCall]);
    expect(runs).toEqual([validCall]);
    expect(run.toolCalls.map((call) => call.status)).toEqual(["invalid", "invalid", "invalid", "ok"]);
  });
});
