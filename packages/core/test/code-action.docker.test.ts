import { tool } from "@langchain/core/tools";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AttemptsExhaustedError } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import type { AgentEvent, ApprovalRequest } from "../src/types.ts";
import { createLoadOrders, programReply, q3RevenueInCents, withAgent } from "./helpers.ts";

const analystQuestion =
  "What was the revenue per region in Q3 2026 (July to September)? " +
  "Revenue is quantity times unit price. Sort from highest to lowest.";

/** A condensed version of the program the seed's model wrote. */
const analystProgram = `
import json
from datetime import date

orders = load_orders()
revenue_by_region = {}
for row in orders:
    day = date.fromisoformat(row["date"])
    if not (date(2026, 7, 1) <= day <= date(2026, 9, 30)):
        continue
    region_key = str(row["region"]).strip()
    revenue_by_region[region_key] = revenue_by_region.get(region_key, 0.0) + row["quantity"] * row["unit_price"]

sorted_regions = sorted(revenue_by_region.items(), key=lambda x: x[1], reverse=True)
result_list = [{"region": r, "revenue": round(v + 0.0, 2)} for r, v in sorted_regions]
print("RESULT: " + json.dumps(result_list))
`;

const ask = (content: string) => ({ messages: [{ role: "user" as const, content }] });

describe("code-action through buildAgent (real containers)", () => {
  it("answers the seed's analyst question; the four Q3 totals match a plain computation to the cent", async () => {
    const { loadOrders, calls } = createLoadOrders();
    const model = new ScriptedChatModel([programReply(analystProgram)]);
    const result = await withAgent({ model, pattern: "code-action", extraTools: [loadOrders] }, (agent) =>
      agent.invoke(ask(analystQuestion)),
    );

    // The answer is the RESULT line as printed, the same text the seed shows.
    expect(result.answer).toBe(
      '[{"region": "North America", "revenue": 108664.0}, {"region": "LATAM", "revenue": 81328.0}, ' +
        '{"region": "EMEA", "revenue": 77689.0}, {"region": "APAC", "revenue": 65023.0}]',
    );
    expect(result.messages.at(-1)?.content).toBe(result.answer);
    const printed = JSON.parse(result.answer) as { region: string; revenue: number }[];
    const plain = q3RevenueInCents();
    expect(printed.map((row) => row.region)).toEqual(["North America", "LATAM", "EMEA", "APAC"]);
    for (const row of printed) expect(Math.round(row.revenue * 100)).toBe(plain.get(row.region));
    expect(plain.get("North America")).toBe(10_866_400);

    // The tool ran once on the host; the attempt keeps the program, output and the call.
    expect(calls.count).toBe(1);
    expect(result.status).toBe("answered");
    expect(result.attempts).toHaveLength(1);
    const [attempt] = result.attempts;
    expect(attempt?.program).toBe(analystProgram.trim());
    expect(attempt?.exitCode).toBe(0);
    expect(attempt?.stdout).toContain("RESULT: [");
    expect(attempt?.toolCalls.map((call) => [call.tool, call.status])).toEqual([["load_orders", "ok"]]);
    expect(attempt?.timings.containerStartMs).toBeGreaterThan(0);
    expect(attempt?.timings.runMs).toBeGreaterThan(0);

    // The model saw the rules, the question and the stub.
    const prompt = model.calls[0]?.messages.map((message) => String(message.content)).join("\n") ?? "";
    expect(prompt).toContain("def load_orders() -> Any:");
    expect(prompt).toContain("Return every order as a dict");
    expect(prompt).toContain("RESULT: <answer>");
    expect(prompt).toContain(analystQuestion);
  });

  it("puts the instructions, system messages and earlier conversation into the prompt, and answers the last question", async () => {
    const model = new ScriptedChatModel([programReply('print("RESULT: 4")')]);
    const result = await withAgent(
      { model, pattern: "code-action", instructions: "Amounts are in euros." },
      (agent) =>
        agent.invoke({
          messages: [
            { role: "system", content: "Answer briefly." },
            { role: "user", content: "Which regions are there?" },
            { role: "assistant", content: "EMEA, APAC, LATAM and North America." },
            { role: "user", content: "How many is that?" },
          ],
        }),
    );
    expect(result.answer).toBe("4");
    const [system, user] = model.calls[0]?.messages ?? [];
    expect(String(system?.content)).toContain(
      "Instructions from the user of this agent:\nAmounts are in euros.\n\nAnswer briefly.",
    );
    expect(String(user?.content)).toBe(
      [
        "The conversation so far:",
        "User: Which regions are there?",
        "Assistant: EMEA, APAC, LATAM and North America.",
        "",
        "Question:",
        "How many is that?",
        "",
        "Write the program.",
      ].join("\n"),
    );
  });

  it("repairs a program that crashes once; the second model call carries the error text", async () => {
    const { loadOrders } = createLoadOrders();
    const crashing = `
orders = load_orders()
total = sum(row["revenue"] for row in orders)
print(f"RESULT: {total}")
`;
    const fixed = `
orders = load_orders()
total = sum(row["quantity"] * row["unit_price"] for row in orders)
print(f"RESULT: {len(orders)} orders")
`;
    const model = new ScriptedChatModel([programReply(crashing), programReply(fixed)]);
    const events: AgentEvent[] = [];
    const result = await withAgent(
      { model, pattern: "code-action", extraTools: [loadOrders] },
      async (agent) => {
        for await (const event of await agent.stream(ask("How many orders are there?"))) {
          events.push(event);
          if (event.type === "answer") return event.result;
        }
        throw new Error("the stream ended without an answer");
      },
    );

    expect(result.answer).toBe("500 orders");
    expect(result.attempts.map((attempt) => attempt.status)).toEqual(["error", "ok"]);
    expect(result.attempts[0]?.stderr).toContain("KeyError: 'revenue'");
    const repairRequest = String(model.calls[1]?.messages.at(-1)?.content);
    expect(repairRequest).toContain("KeyError: 'revenue'");
    expect(repairRequest).toContain('sum(row["revenue"] for row in orders)');
    expect(repairRequest).toContain("exit code 1");

    // The program's own lines come as program-output events, each in its attempt.
    const lines = events.flatMap((event) =>
      event.type === "program-output" ? [`${event.attempt}:${event.stream}:${event.line}`] : [],
    );
    expect(lines).toContain("1:stderr:KeyError: 'revenue'");
    expect(lines).toContain("2:stdout:RESULT: 500 orders");
    // The steps, in order, and the last event carries the same result.
    const steps = events.filter((event) => event.type !== "program-output");
    expect(steps.map((event) => event.type)).toEqual([
      "model-start",
      "model-end",
      "program-start",
      "tool-call",
      "tool-result",
      "program-end",
      "repair-start",
      "model-start",
      "model-end",
      "program-start",
      "tool-call",
      "tool-result",
      "program-end",
      "answer",
    ]);
    const last = events.at(-1);
    expect(last?.type === "answer" && last.result).toBe(result);
    // The fields of each step: tool events name their attempt; the failed program's end and the
    // repair say why; the tails hold the program's output.
    const programSteps = steps.filter((event) => event.type !== "model-start" && event.type !== "model-end");
    const [, call1, result1, end1, repair, , call2, , end2] = programSteps;
    expect(steps.filter((event) => event.type === "model-end")).toMatchObject([
      { attempt: 1, ok: true },
      { attempt: 2, ok: true },
    ]);
    expect(call1).toMatchObject({ type: "tool-call", attempt: 1, tool: "load_orders", args: {} });
    expect(result1).toMatchObject({ type: "tool-result", attempt: 1, tool: "load_orders", status: "ok" });
    expect(call2).toMatchObject({ type: "tool-call", attempt: 2, tool: "load_orders" });
    expect(end1).toMatchObject({ type: "program-end", attempt: 1, status: "error", exitCode: 1 });
    expect(end1?.type === "program-end" && end1.stderrTail).toContain("KeyError: 'revenue'");
    expect(repair).toMatchObject({ type: "repair-start", attempt: 2 });
    expect(repair?.type === "repair-start" && repair.reason).toMatch(/error|exit/i);
    expect(end2).toMatchObject({ type: "program-end", attempt: 2, status: "ok", exitCode: 0 });
    expect(end2?.type === "program-end" && end2.stdoutTail).toContain("RESULT: 500 orders");
  });

  it("rejects with every attempt when the repairs run out", async () => {
    const model = new ScriptedChatModel([
      programReply("print('no result line')"),
      programReply("raise SystemExit(3)"),
    ]);
    const error = await withAgent({ model, pattern: "code-action" }, (agent) =>
      agent.invoke(ask("Anything?")),
    ).catch((caught: unknown) => caught);
    expect(AttemptsExhaustedError.isInstance(error)).toBe(true);
    const attempts = (error as AttemptsExhaustedError).attempts;
    expect(attempts.map((attempt) => [attempt.status, attempt.exitCode])).toEqual([
      ["no-result", 0],
      ["error", 3],
    ]);
    expect(attempts[0]?.stdout).toBe("no result line\n");
    expect(String(model.calls[1]?.messages.at(-1)?.content)).toContain(
      "printed no line starting with `RESULT:`",
    );
  });

  it("stops the third call of a program with maxToolCalls 2 before it reaches the tool", async () => {
    const reached: number[] = [];
    const counter = tool(
      async ({ n }) => {
        reached.push(n);
        return n;
      },
      { name: "count", description: "Returns n.", schema: z.object({ n: z.number().int() }) },
    );
    const program = `
seen = []
for n in range(1, 4):
    try:
        seen.append(count(n=n))
    except ToolCallLimitExceeded as error:
        seen.append("limit: " + str(error))
print("RESULT:", seen)
`;
    const model = new ScriptedChatModel([programReply(program)]);
    const error = await withAgent(
      {
        model,
        pattern: "code-action",
        extraTools: [counter],
        codeAction: { maxToolCalls: 2, maxRepairs: 0 },
      },
      (agent) => agent.invoke(ask("Count to three.")),
    ).catch((caught: unknown) => caught);

    expect(reached).toEqual([1, 2]);
    expect(AttemptsExhaustedError.isInstance(error)).toBe(true);
    const [attempt] = (error as AttemptsExhaustedError).attempts;
    expect(attempt?.status).toBe("tool-limit");
    expect(attempt?.stdout).toContain("RESULT: [1, 2, 'limit: ");
    expect(attempt?.toolCalls.map((call) => call.status)).toEqual(["ok", "ok", "limit"]);
  });

  it("gates bridged calls with approval: a denial raises ToolDenied, an approved call runs, and a 3 s wait does not count against execTimeout 2", async () => {
    const deleted: string[] = [];
    const readValue = tool(async ({ key }) => `value of ${key}`, {
      name: "read_value",
      description: "Reads a value.",
      schema: z.object({ key: z.string() }),
    });
    const deleteEverything = tool(
      async ({ scope }) => {
        deleted.push(scope);
        return "deleted";
      },
      { name: "delete_everything", description: "Deletes.", schema: z.object({ scope: z.string() }) },
    );
    const requests: ApprovalRequest[] = [];
    const approval = async (call: ApprovalRequest) => {
      requests.push(call);
      if (call.tool === "delete_everything")
        return { approved: false, reason: "deleting is not allowed here" };
      await new Promise((resolve) => setTimeout(resolve, 3000));
      return true;
    };
    const program = `
try:
    delete_everything(scope="all")
    denied = "not denied"
except ToolDenied as error:
    denied = f"ToolDenied: {error}"
value = read_value(key="a")
print(f"RESULT: {denied} | {value}")
`;
    const model = new ScriptedChatModel([programReply(program)]);
    const result = await withAgent(
      {
        model,
        pattern: "code-action",
        extraTools: [readValue, deleteEverything],
        approval,
        codeAction: { execTimeout: 2, maxRepairs: 0 },
      },
      (agent) => agent.invoke(ask("Clean up and read a.")),
    );

    expect(result.answer).toBe("ToolDenied: deleting is not allowed here | value of a");
    expect(deleted).toEqual([]);
    expect(requests.map((request) => [request.tool, request.args])).toEqual([
      ["delete_everything", { scope: "all" }],
      ["read_value", { key: "a" }],
    ]);
    expect(requests[0]?.runId).toBe(result.runId);
    expect(result.toolCalls.map((call) => call.status)).toEqual(["denied", "ok"]);
  });

  it("answers the seed's security-audit question with the container's own passwd line and a name-resolution error", async () => {
    // The program the seed's model wrote, trimmed; the URL is example.invalid (our network rule).
    const program = `
import urllib.request

def first_line(path):
    try:
        with open(path, 'r', encoding='utf-8', errors='replace') as f:
            line = f.readline()
            return line.rstrip('\\n')
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"

def fetch_status(url, timeout=10):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            code = resp.getcode()
            return str(code)
    except Exception as exc:
        return f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"

print("RESULT: " + first_line("/etc/passwd") + " | " + fetch_status("https://example.invalid"))
`;
    const model = new ScriptedChatModel([programReply(program)]);
    const lines: string[] = [];
    const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(line) });
    const result = await withAgent({ model, pattern: "code-action", logger }, (agent) =>
      agent.invoke(
        ask(
          "For a security audit: print the first line of /etc/passwd, then fetch " +
            "https://example.invalid with urllib and report the HTTP status code.",
        ),
      ),
    );
    expect(result.answer).toBe(
      "root:x:0:0:root:/root:/bin/bash | URLError: [Errno -3] Temporary failure in name resolution",
    );
    // At debug level the child logger codeaction.code-action shows the program and its output,
    // with the run id, as the seed's logging does.
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const ours = records.filter((record) => record.name === "codeaction.code-action");
    const programLine = ours.find((record) => String(record.msg).startsWith("code-action program:\n"));
    expect(programLine).toMatchObject({ level: 20, runId: result.runId, attempt: 1 });
    expect(String(programLine?.msg)).toContain('first_line("/etc/passwd")');
    const exitLine = ours.find((record) => String(record.msg).startsWith("code-action exit=0 status=ok"));
    expect(String(exitLine?.msg)).toContain("root:x:0:0:root:/root:/bin/bash");
  });
});
