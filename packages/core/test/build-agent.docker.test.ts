import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { buildAgent, SandboxUnavailableError } from "../src/index.ts";
import { ScriptedChatModel, startOpenAIFixture } from "../src/testing/index.ts";
import { createLoadOrders, programReply, readOrders } from "./helpers.ts";

const missingImage = "codeaction/no-such-image:0";

const savedEnvironment = { key: process.env.OPENAI_API_KEY, baseURL: process.env.OPENAI_BASE_URL };
afterEach(() => {
  for (const [name, value] of [
    ["OPENAI_API_KEY", savedEnvironment.key],
    ["OPENAI_BASE_URL", savedEnvironment.baseURL],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe("buildAgent and the sandbox (real engine)", () => {
  it("refuses to build a code-action agent whose sandbox cannot be initialized, naming the cause", async () => {
    const model = new ScriptedChatModel([]);
    const error = await buildAgent({ model, pattern: "code-action", sandbox: { image: missingImage } }).catch(
      (caught: unknown) => caught,
    );
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toMatch(
      /^pattern 'code-action' requires a working Docker sandbox, but it could not be initialized: /,
    );
    expect(message).toContain(missingImage);
    expect(model.calls).toHaveLength(0);
  });

  it("refuses shell mode the same way", async () => {
    const error = await buildAgent({
      model: new ScriptedChatModel([]),
      sandbox: { image: missingImage },
    }).catch((caught: unknown) => caught);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /^sandbox=\{"image":"codeaction\/no-such-image:0"\} requires a working Docker sandbox, but it could not be initialized: /,
    );
  });

  it("with an allow-list, each egress request is logged with the run id of the program that made it", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const program = `
import urllib.request, urllib.error
try:
    urllib.request.urlopen("http://example.invalid/", timeout=20)
    print("RESULT: reached")
except urllib.error.HTTPError as error:
    print("RESULT:", error.code)
`;
    const agent = await buildAgent({
      model: new ScriptedChatModel([programReply(program), programReply(program)]),
      pattern: "code-action",
      sandbox: { network: { allow: ["pypi.test.invalid"] } },
      logger,
    });
    try {
      const runs = [];
      for (const question of ["first", "second"]) {
        runs.push(await agent.invoke({ messages: [{ role: "user", content: question }] }));
      }
      for (const run of runs) {
        expect(run.answer).toBe("403");
        // The proxy writes its access log line when the request ends: give it a moment to arrive.
        const refusedOf = () =>
          lines.filter((line) => line.msg === "egress request refused" && line.runId === run.runId);
        for (let waited = 0; waited < 5000 && refusedOf().length === 0; waited += 100) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const refused = refusedOf();
        expect(refused).toHaveLength(1);
        expect(refused[0]).toMatchObject({ host: "example.invalid", decision: "refused", status: 403 });
      }
    } finally {
      await agent.close();
    }
  });

  it("gives shell mode its five sandbox tools over one container", async () => {
    const agent = await buildAgent({ model: new ScriptedChatModel([]), sandbox: { network: "none" } });
    try {
      expect(agent.pattern).toBe("tools");
      expect(agent.tools.map((tool) => tool.name).sort()).toEqual([
        "sandbox_exec",
        "sandbox_install_package",
        "sandbox_list_files",
        "sandbox_read_file",
        "sandbox_write_file",
      ]);
    } finally {
      await agent.close();
    }
  });

  it('runs a code-action turn end to end through the real ChatOpenAI client ("openai:gpt-5-mini" and OPENAI_BASE_URL)', async () => {
    const program = `
orders = load_orders()
emea = sum(1 for row in orders if row["region"] == "EMEA")
print(f"RESULT: {emea}")
`;
    const fixture = await startOpenAIFixture({ replies: [programReply(program)] });
    process.env.OPENAI_API_KEY = "sk-fixture";
    process.env.OPENAI_BASE_URL = fixture.baseURL;
    const { loadOrders, calls } = createLoadOrders();
    try {
      const agent = await buildAgent({
        model: "openai:gpt-5-mini",
        pattern: "code-action",
        extraTools: [loadOrders],
      });
      try {
        const result = await agent.invoke({
          messages: [{ role: "user", content: "How many EMEA orders are there?" }],
        });
        const expected = readOrders().filter((row) => row.region === "EMEA").length;
        expect(result.answer).toBe(String(expected));
        expect(calls.count).toBe(1);
        expect(result.attempts[0]?.usage?.totalTokens).toBeGreaterThan(0);
      } finally {
        await agent.close();
      }
      expect(fixture.requests).toHaveLength(1);
      const body = fixture.requests[0]?.body as {
        model: string;
        messages: { role: string; content: string }[];
      };
      expect(body.model).toBe("gpt-5-mini");
      // ChatOpenAI sends a reasoning model's system message with the "developer" role.
      expect(body.messages.map((message) => message.role)).toEqual(["developer", "user"]);
      expect(body.messages[0]?.content).toContain("def load_orders() -> Any:");
      expect(body.messages[1]?.content).toContain("How many EMEA orders are there?");
    } finally {
      await fixture.close();
    }
  });
});
