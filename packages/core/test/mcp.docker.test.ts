import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAgent } from "../src/build-agent.ts";
import { AttemptsExhaustedError } from "../src/errors/attempts-exhausted-error.ts";
import { McpServerError } from "../src/errors/mcp-server-error.ts";
import type { ServerSpec } from "../src/mcp/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { FIXTURE_ERROR_MESSAGE, FIXTURE_PNG_BASE64 } from "./fixtures/mcp-fixture-tools.ts";
import { type HttpFixtureServer, startHttpFixtureServer } from "./fixtures/mcp-http-server.ts";
import { isRunning } from "./helpers.ts";

const stdioFixture = fileURLToPath(new URL("./fixtures/mcp-stdio-server.ts", import.meta.url));
const fourTools = ["lookup_order", "greet", "check_inventory", "get-user", "list_tags", "logo"];
const stdioServer: ServerSpec = {
  command: process.execPath,
  args: [stdioFixture, `--tools=${fourTools.join(",")}`],
};

/** Calls every fixture tool and prints what arrived, with its Python type. */
const program = `\`\`\`python
import json

order = lookup_order(orderId="A-1001")
greeting = greet(name="Ada")
try:
    check_inventory(sku="KB-01")
    caught = None
except ToolError as error:
    caught = str(error)
user = get_user()
tags = list_tags()
logo_image = logo()
report = {
    "order_type": type(order).__name__,
    "order_total": order["total"],
    "first_sku": order["items"][0]["sku"],
    "greeting_type": type(greeting).__name__,
    "greeting": greeting,
    "caught": caught,
    "user_type": type(user).__name__,
    "user": user,
    "tags": tags,
    "logo": logo_image,
}
print("RESULT: " + json.dumps(report))
\`\`\``;

const expectedReport = {
  order_type: "dict",
  order_total: 1234.5,
  first_sku: "KB-01",
  greeting_type: "str",
  greeting: "Hello, Ada!",
  caught: FIXTURE_ERROR_MESSAGE,
  user_type: "dict",
  user: { id: 1, fields: ["name"], verbose: false, name: "user-1" },
  tags: ["sale", "new"],
  logo: { type: "image", mimeType: "image/png", data: FIXTURE_PNG_BASE64 },
};

function containersOfThisProcess(): string[] {
  return execFileSync("docker", ["ps", "-a", "-q", "--filter", `label=codeaction.owner-pid=${process.pid}`], {
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean);
}

/** Children of this process that are alive (not zombies). */
function runningChildren(): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return children.filter(isRunning);
}

let httpFixture: HttpFixtureServer;
beforeAll(async () => {
  httpFixture = await startHttpFixtureServer({ tools: fourTools });
});
afterAll(async () => {
  await httpFixture.close();
});

describe.each([
  ["stdio", () => stdioServer],
  ["Streamable HTTP", (): ServerSpec => ({ url: httpFixture.url })],
])("MCP tools over %s in a code-action program", (_transport, server) => {
  it("arrive as a dict, a str, a caught ToolError and the right defaults", async () => {
    const model = new ScriptedChatModel([program]);
    await using agent = await buildAgent({ model, pattern: "code-action", servers: { shop: server() } });
    expect(agent.tools.map((tool) => [tool.name, tool.origin])).toContainEqual(["get-user", "mcp:shop"]);

    const result = await agent.invoke({ messages: [{ role: "user", content: "Check order A-1001." }] });
    expect(JSON.parse(result.answer)).toEqual(expectedReport);

    // The model saw real stubs made from the MCP schemas.
    const prompt = model.calls[0]?.messages.map((message) => String(message.content)).join("\n") ?? "";
    expect(prompt).toContain("def get_user(*, id: int = 1");
    expect(prompt).toContain("def lookup_order(*, orderId: str) -> dict[str, Any]:");

    const calls = result.attempts.at(-1)?.toolCalls ?? [];
    expect(calls.map((call) => [call.tool, call.status])).toEqual([
      ["lookup_order", "ok"],
      ["greet", "ok"],
      ["check_inventory", "error"],
      ["get-user", "ok"],
      ["list_tags", "ok"],
      ["logo", "ok"],
    ]);
  });
});

describe("approval and the tool-call cap", () => {
  it("apply to MCP calls as to any other", async () => {
    const capped = `\`\`\`python
lookup_order(orderId="A-1001")
try:
    greet(name="Ada")
except ToolDenied as error:
    print("denied:", error)
get_user()
list_tags()
print("RESULT: done")
\`\`\``;
    const seen: string[] = [];
    await using agent = await buildAgent({
      model: new ScriptedChatModel([capped]),
      pattern: "code-action",
      servers: { shop: stdioServer },
      codeAction: { maxToolCalls: 3, maxRepairs: 0 },
      approval: (call) => {
        seen.push(call.tool);
        return call.tool === "greet" ? { approved: false, reason: "greetings are off today" } : true;
      },
    });
    const error = await agent
      .invoke({ messages: [{ role: "user", content: "Check order A-1001." }] })
      .catch((caught: unknown) => caught);
    expect(AttemptsExhaustedError.isInstance(error)).toBe(true);
    const attempt = (error as AttemptsExhaustedError).attempts[0];
    expect(attempt?.status).toBe("tool-limit");
    expect(attempt?.stdout).toContain("denied: greetings are off today");
    expect(attempt?.toolCalls.map((call) => [call.tool, call.status])).toEqual([
      ["lookup_order", "ok"],
      ["greet", "denied"],
      ["get-user", "ok"],
      ["list_tags", "limit"],
    ]);
    // The call over the cap was never put to approval, let alone to the server.
    expect(seen).toEqual(["lookup_order", "greet", "get-user"]);
  });
});

describe("MCP tools through the tools pattern", () => {
  it("are ordinary tools: structured results, text, the error message and the defaults reach the model", async () => {
    const model = new ScriptedChatModel([
      {
        toolCalls: [
          { name: "lookup_order", args: { orderId: "A-1001" }, id: "call_1" },
          { name: "greet", args: { name: "Ada" }, id: "call_2" },
          { name: "check_inventory", args: { sku: "KB-01" }, id: "call_3" },
          { name: "get-user", args: {}, id: "call_4" },
        ],
      },
      "Order A-1001 totals 1234.5 EUR.",
    ]);
    await using agent = await buildAgent({ model, pattern: "tools", servers: { shop: stdioServer } });
    const result = await agent.invoke({ messages: [{ role: "user", content: "Check order A-1001." }] });
    expect(result.answer).toBe("Order A-1001 totals 1234.5 EUR.");
    expect(result.toolCalls.map((call) => [call.tool, call.status])).toEqual([
      ["lookup_order", "ok"],
      ["greet", "ok"],
      ["check_inventory", "error"],
      ["get-user", "ok"],
    ]);
    expect(result.toolCalls[0]?.result).toMatchObject({ orderId: "A-1001", total: 1234.5 });
    expect(result.toolCalls[2]?.error).toContain(FIXTURE_ERROR_MESSAGE);
    expect(result.toolCalls[3]?.result).toEqual({ id: 1, fields: ["name"], verbose: false, name: "user-1" });

    // What the model got back for each call.
    const toolMessages = (model.calls[1]?.messages ?? []).filter((message) => message instanceof ToolMessage);
    const byId = Object.fromEntries(
      toolMessages.map((message) => [message.tool_call_id, String(message.content)]),
    );
    expect(JSON.parse(byId.call_1 ?? "null")).toMatchObject({ orderId: "A-1001", region: "EMEA" });
    expect(byId.call_2).toContain("Hello, Ada!");
    expect(byId.call_3).toContain(FIXTURE_ERROR_MESSAGE);
    expect(JSON.parse(byId.call_4 ?? "null")).toEqual({
      id: 1,
      fields: ["name"],
      verbose: false,
      name: "user-1",
    });
  });
});

describe("a server that fails to start", () => {
  it("fails buildAgent with its name and stderr, and leaves no container and no process", async () => {
    const childrenBefore = runningChildren();
    const containersBefore = containersOfThisProcess();
    const error = await buildAgent({
      model: new ScriptedChatModel([program]),
      pattern: "code-action",
      servers: {
        shop: stdioServer,
        broken: {
          command: process.execPath,
          args: ["-e", "console.error('boom: missing config'); process.exit(3)"],
        },
      },
    }).catch((caught: unknown) => caught);
    expect(McpServerError.isInstance(error)).toBe(true);
    expect((error as McpServerError).message).toMatch(
      /^MCP server 'broken' .* failed to start: the process exited with code 3/,
    );
    expect((error as McpServerError).message).toContain("boom: missing config");
    expect(containersOfThisProcess()).toEqual(containersBefore);
    expect(runningChildren().filter((pid) => !childrenBefore.includes(pid))).toEqual([]);
  });
});

describe("MCP servers in shell mode", () => {
  it("renames a server tool that clashes with a shell tool, and close() ends the server process", async () => {
    const agent = await buildAgent({
      model: new ScriptedChatModel([]),
      sandbox: { network: "none" },
      servers: {
        shop: { command: process.execPath, args: [stdioFixture, "--tools=sandbox_exec,server_info"] },
      },
    });
    let pid = 0;
    try {
      const names = agent.tools.map((tool) => tool.name).sort();
      expect(names).toEqual([
        "sandbox_exec",
        "sandbox_install_package",
        "sandbox_list_files",
        "sandbox_read_file",
        "sandbox_write_file",
        "server_info",
        "shop_sandbox_exec",
      ]);
      const renamed = agent.tools.find((tool) => tool.name === "shop_sandbox_exec");
      expect(renamed?.origin).toBe("mcp:shop");
      expect(await renamed?.invoke({}, { runId: "r" })).toBe("the server's sandbox_exec");
      const info = (await agent.tools
        .find((tool) => tool.name === "server_info")
        ?.invoke({}, { runId: "r" })) as {
        pid: number;
      };
      pid = info.pid;
      expect(isRunning(pid)).toBe(true);
    } finally {
      await agent.close();
    }
    expect(isRunning(pid)).toBe(false);
  });
});
