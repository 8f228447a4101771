import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { buildAgent } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { programReply } from "./helpers.ts";

/** Tools whose names and shapes stress the stubs and the bridge. */
function createTools() {
  const received: { tool: string; args: unknown }[] = [];
  const getUser = tool(
    async (args) => {
      received.push({ tool: "get-user", args });
      return {
        id: args["user-id"],
        profile: { name: "Ada", roles: ["admin", "dev"], address: { city: "London" } },
      };
    },
    {
      name: "get-user",
      description: "Fetch one user by id, with a nested profile.",
      schema: z.object({
        "user-id": z.string().describe("The user's id."),
        "include-email": z.boolean().optional().describe("Also return the e-mail address."),
        sort: z.enum(["asc", "desc"]).optional(),
      }),
    },
  );
  const fromTool = tool(
    async (args) => {
      received.push({ tool: "from", args });
      return `${args.class}:${args.lambda ?? "none"}`;
    },
    {
      name: "from",
      description: "A tool named after a Python keyword, with keyword-named arguments.",
      schema: z.object({ class: z.string(), lambda: z.number().optional() }),
    },
  );
  const failing = tool(
    async () => {
      throw new Error("the warehouse database is down");
    },
    { name: "check_stock", description: "Always fails.", schema: z.object({}) },
  );
  let concurrent = 0;
  let peak = 0;
  const slowEcho = tool(
    async ({ n }) => {
      concurrent += 1;
      peak = Math.max(peak, concurrent);
      await new Promise((resolve) => setTimeout(resolve, 200));
      concurrent -= 1;
      received.push({ tool: "slow_echo", args: { n } });
      return n * 10;
    },
    {
      name: "slow_echo",
      description: "Returns n * 10 after a short wait.",
      schema: z.object({ n: z.number().int() }),
    },
  );
  return { tools: [getUser, fromTool, failing, slowEcho], received, peak: () => peak };
}

describe("bridged tools (real containers)", () => {
  it("calls dashed and keyword names, leaves optional arguments out, returns nested objects, raises ToolError, and answers 20 threads once each", async () => {
    const { tools, received, peak } = createTools();
    const program = `
import json
from concurrent.futures import ThreadPoolExecutor

user = get_user(user_id="u-1")
user_with_email = get_user(user_id="u-2", include_email=True, sort="desc")
keyword = from_(class_="economy")
try:
    check_stock()
    failure = "no error"
except ToolError as error:
    failure = f"{type(error).__name__}: {error}"

with ThreadPoolExecutor(max_workers=20) as pool:
    echoed = list(pool.map(lambda n: slow_echo(n=n), range(20)))

print("RESULT: " + json.dumps({
    "city": user["profile"]["address"]["city"],
    "roles": user["profile"]["roles"],
    "types": [type(user).__name__, type(user["profile"]["roles"]).__name__],
    "keyword": keyword,
    "failure": failure,
    "echoed": echoed,
}))
`;
    const model = new ScriptedChatModel([programReply(program)]);
    const agent = await buildAgent({
      model,
      pattern: "code-action",
      extraTools: tools,
      codeAction: { maxRepairs: 0 },
    });
    try {
      const result = await agent.invoke({ messages: [{ role: "user", content: "Exercise the tools." }] });
      const answer = JSON.parse(result.answer);
      expect(answer).toEqual({
        city: "London",
        roles: ["admin", "dev"],
        types: ["dict", "list"],
        keyword: "economy:none",
        failure: "ToolError: the warehouse database is down",
        echoed: Array.from({ length: 20 }, (_, n) => n * 10),
      });

      // Optional arguments never given were not sent at all; given ones arrive under their own names.
      expect(received.filter((call) => call.tool !== "slow_echo")).toEqual([
        { tool: "get-user", args: { "user-id": "u-1" } },
        { tool: "get-user", args: { "user-id": "u-2", "include-email": true, sort: "desc" } },
        { tool: "from", args: { class: "economy" } },
      ]);
      // Each of the 20 threaded calls reached the tool exactly once, and they overlapped.
      const echoes = received
        .filter((call) => call.tool === "slow_echo")
        .map((call) => (call.args as { n: number }).n);
      expect(echoes.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, n) => n));
      expect(peak()).toBeGreaterThan(1);

      const statuses = result.toolCalls.map((call) => `${call.tool}:${call.status}`);
      expect(statuses.filter((status) => status === "check_stock:error")).toHaveLength(1);
      expect(statuses.filter((status) => status === "slow_echo:ok")).toHaveLength(20);

      // The model saw valid Python signatures with the names mapped.
      const prompt = String(model.calls[0]?.messages[0]?.content);
      expect(prompt).toContain(
        'def get_user(*, user_id: str, include_email: bool | None = None, sort: Literal["asc", "desc"] | None = None) -> Any:',
      );
      expect(prompt).toContain("def from_(*, class_: str, lambda_: float | None = None) -> Any:");
    } finally {
      await agent.close();
    }
  });

  it("sends an argument that fails the tool's schema back as a ToolError naming the field", async () => {
    const { tools } = createTools();
    const program = `
try:
    slow_echo(n="seven")
    outcome = "accepted"
except ToolError as error:
    outcome = str(error)
print("RESULT:", outcome)
`;
    const model = new ScriptedChatModel([programReply(program)]);
    const agent = await buildAgent({ model, pattern: "code-action", extraTools: tools });
    try {
      const result = await agent.invoke({ messages: [{ role: "user", content: "Echo seven." }] });
      expect(result.answer).toBe(
        "Invalid input for tool 'slow_echo': n: Invalid input: expected number, received string. Call it again with arguments that match its schema.",
      );
      expect(result.toolCalls.map((call) => [call.status, call.args])).toEqual([["invalid", { n: "seven" }]]);
    } finally {
      await agent.close();
    }
  });
});
