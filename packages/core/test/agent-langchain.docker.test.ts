import { tool } from "@langchain/core/tools";
import { LangChainTracer } from "@langchain/core/tracers/tracer_langchain";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { AttemptsExhaustedError, buildAgent, SandboxUnavailableError } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { containersOfThisProcess, programReply } from "./helpers.ts";
import { startLangSmithCapture } from "./langsmith-capture.ts";

const add = tool(async ({ a, b }: { a: number; b: number }) => a + b, {
  name: "add",
  description: "Add two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});

describe("typed answers (responseFormat) against the real engine", () => {
  test("a RESULT of the wrong shape is repaired with the path named; result.structured is the typed value", async () => {
    const model = new ScriptedChatModel([
      programReply('import json\nprint("RESULT: " + json.dumps({"total": "5", "regions": ["EU"]}))'),
      programReply(
        'import json\nfrom codeaction_tools import add\nprint("RESULT: " + json.dumps({"total": add(a=2, b=3), "regions": ["EU"]}))',
      ),
    ]);
    const summary = z.object({ total: z.number(), regions: z.array(z.string()) });
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      sandbox: { pool: 0 },
      extraTools: [add],
      responseFormat: summary,
    });
    const result = await agent.invoke("Total and regions?");
    const total: number = result.structured.total;
    expect(total).toBe(5);
    expect(result.structured).toEqual({ total: 5, regions: ["EU"] });
    expect(result.attempts.map((attempt) => attempt.status)).toEqual(["invalid-result", "ok"]);
    expect(result.attempts[0]?.invalidResult).toContain(
      "total: Invalid input: expected number, received string",
    );
    const system = String(model.calls[0]?.messages[0]?.content);
    expect(system).toContain('"regions":{"type":"array","items":{"type":"string"}}');
    const repair = String(model.calls[1]?.messages.at(-1)?.content);
    expect(repair).toContain("Reason: The program's RESULT was refused");
    expect(repair).toContain("total: Invalid input: expected number, received string");
  }, 180_000);
});

describe("the prompt tells the model what network it may reach", () => {
  test("an allow-list's hosts are named, and no-network is not claimed", async () => {
    // A reply with no program: the prompt is built and seen, and no container starts.
    const model = new ScriptedChatModel(["The answer is 4."]);
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      sandbox: { pool: 0, network: { allow: ["api.example.org", "*.example.com"] } },
      codeAction: { maxRepairs: 0 },
    });
    const error = await agent.invoke("2 + 2?").catch((thrown: unknown) => thrown);
    expect(AttemptsExhaustedError.isInstance(error)).toBe(true);
    const system = String(model.calls[0]?.messages[0]?.content);
    expect(system).toContain(
      "may reach only these hosts, over HTTP or HTTPS on ports 80 and 443: api.example.org, *.example.com",
    );
    expect(system).not.toContain("Do not use the network");
    expect(system).not.toContain("no network");
  }, 180_000);
});

describe("an image the agent cannot run programs in is refused when the agent is built", () => {
  test("an image without python3 (the egress proxy's) names the image, what is missing and the fix", async () => {
    const error = await buildAgent({
      model: new ScriptedChatModel([]),
      pattern: "code-action",
      sandbox: { image: "codeaction/proxy:squid", pool: 0 },
    }).catch((thrown: unknown) => thrown);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      'The sandbox image "codeaction/proxy:squid" has no python3 on its PATH (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)',
    );
    expect((error as Error).message).toContain("Use an image with Python 3 as python3");
    // The container its files were read from is gone (it was never started).
    expect(containersOfThisProcess()).toEqual([]);
  }, 180_000);
});

describe("LangChain's own tracer (LangSmith client, endpoint from the environment) on a loopback capture", () => {
  let capture: Awaited<ReturnType<typeof startLangSmithCapture>>;
  const saved = { endpoint: process.env.LANGSMITH_ENDPOINT, key: process.env.LANGSMITH_API_KEY };
  beforeAll(async () => {
    capture = await startLangSmithCapture();
    process.env.LANGSMITH_ENDPOINT = capture.url;
    process.env.LANGSMITH_API_KEY = "capture-only";
  });
  afterAll(async () => {
    for (const [name, value] of [
      ["LANGSMITH_ENDPOINT", saved.endpoint],
      ["LANGSMITH_API_KEY", saved.key],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await capture.close();
  });

  test("one run tree: the turn, its attempts, each attempt's LLM run and tool runs, linked by parent ids", async () => {
    const model = new ScriptedChatModel([
      programReply("raise SystemExit(3)"),
      programReply('from codeaction_tools import add\nprint("RESULT:", add(a=2, b=3))'),
    ]);
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      sandbox: { pool: 0 },
      extraTools: [add],
    });
    const tracer = new LangChainTracer({ projectName: "codeaction-test" });
    const result = await agent.invoke("2 + 3?", { callbacks: [tracer], runName: "analyst" });
    expect(result.answer).toBe("5");
    // The default client (built from LANGSMITH_ENDPOINT) batches in the background: wait for it.
    await (
      tracer.client as unknown as { awaitPendingTraceBatches(): Promise<void> }
    ).awaitPendingTraceBatches();

    expect(capture.unexpected).toEqual([]);
    const [turn, ...otherRoots] = capture.children(undefined);
    expect(otherRoots).toEqual([]);
    expect(turn).toMatchObject({ name: "analyst", run_type: "chain", outputs: { answer: "5" } });
    expect(turn?.end_time).toBeDefined();
    const attempts = capture.children(turn?.id);
    expect(attempts.map((run) => [run.name, run.run_type, run.tags?.includes("repair") ?? false])).toEqual([
      ["attempt 1", "chain", false],
      ["attempt 2", "chain", true],
    ]);
    expect(capture.children(attempts[0]?.id).map((run) => run.run_type)).toEqual(["llm"]);
    const second = capture.children(attempts[1]?.id);
    expect(second.map((run) => [run.run_type, run.name])).toEqual([
      ["llm", "ScriptedChatModel"],
      ["tool", "add"],
    ]);
    expect(second[1]?.outputs).toBeDefined();
    // Every run belongs to the one trace of the turn.
    expect(new Set([...capture.runs.values()].map((run) => run.trace_id))).toEqual(new Set([turn?.id]));
  }, 180_000);
});
