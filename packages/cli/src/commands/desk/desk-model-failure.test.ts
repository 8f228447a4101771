import { buildAgent } from "@codeaction/core";
import { type OpenAIFixture, startOpenAIFixture } from "@codeaction/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { modelCallSettings } from "../../model-choice.ts";
import { loadModel } from "../../model-load.ts";
import { askInDesk, type DeskAgent, type DeskEvent, type DeskSession } from "./desk-session.ts";

// The desk's error path for a failed model call: a real OpenAI client (the command's own model
// loading, its retries and timeout) against a local server in OpenAI's wire format that answers
// 401, 404, 429 or 500, or reads the request and never answers, and against a closed loopback port.
// The agent uses the tools pattern (no Docker: the model fails before any program). What the page
// gets is the `error` event.

let server: OpenAIFixture | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The desk's `error` event for one question to `baseURL`, with one retry and a 0.3 s timeout. */
async function deskError(baseURL: string): Promise<{ message: string; fix?: string }> {
  const choice = { kind: "live", model: "openai:gpt-x", baseUrl: baseURL } as const;
  const env = { OPENAI_API_KEY: "fixture-key", OPENAI_BASE_URL: baseURL };
  const settings = { retries: 1, timeoutSeconds: 0.3, model: "openai:gpt-x" };
  const model = await loadModel(choice, { ...settings, env, onRetry: () => {}, wait: async () => {} });
  const agent = await buildAgent({ model, pattern: "tools" });
  const built = {
    agent,
    data: { tables: [], tools: [] },
    callOptions: () => ({}),
    newConversation: async () => {},
  } as unknown as DeskAgent;
  const session = {
    built,
    modelChoice: choice,
    modelCall: modelCallSettings(choice, settings),
    image: "codeaction/python:3.11",
    servers: {},
    journalPath: undefined,
    messages: [],
  } as unknown as DeskSession;
  const events: DeskEvent[] = [];
  try {
    await askInDesk(session, {
      question: "How many orders?",
      newConversation: false,
      send: (event) => events.push(event),
    });
  } finally {
    await agent.close();
  }
  const error = events.find((event) => event.event === "error");
  expect(error, JSON.stringify(events)).toBeDefined();
  return error?.data as { message: string; fix?: string };
}

describe("the desk's card for a failed model call: one message per cause, for an analyst", {
  timeout: 60_000,
}, () => {
  it("401: the desk's key, refused; no retry; no command-line option or library advice", async () => {
    server = await startOpenAIFixture({ replies: [], failures: { status: 401 } });
    const error = await deskError(server.baseURL);
    expect(error.message).toBe(`The model at ${server.baseURL} refused the desk's key (HTTP 401).`);
    expect(error.fix).toContain("The key the desk uses for the model is wrong or no longer valid");
    expect(server.requests.length).toBe(1);
  });

  it("404: the model's name, which whoever started the desk chose; not retried", async () => {
    server = await startOpenAIFixture({ replies: [], failures: { status: 404 } });
    const error = await deskError(server.baseURL);
    expect(error.message).toBe(
      `The model at ${server.baseURL} does not have the model openai:gpt-x (HTTP 404).`,
    );
    expect(error.fix).toBe(
      "Whoever started the desk chooses the model (--model): they start the desk again with one this server has.",
    );
    expect(server.requests.length).toBe(1);
  });

  it("429: too many questions, wait and ask again (retried once)", async () => {
    server = await startOpenAIFixture({ replies: [], failures: { status: 429 } });
    const error = await deskError(server.baseURL);
    expect(error.message).toBe(
      `The model at ${server.baseURL} is receiving too many questions right now (HTTP 429, tried 2 times).`,
    );
    expect(error.fix).toBe("Wait a minute, then ask again.");
    expect(server.requests.length).toBe(2);
  });

  it("500: the provider's side, not the question nor the data", async () => {
    server = await startOpenAIFixture({ replies: [], failures: { status: 500 } });
    const error = await deskError(server.baseURL);
    expect(error.message).toBe(
      `The model's provider at ${server.baseURL} had a problem on its side (HTTP 500, tried 2 times).`,
    );
    expect(error.fix).toContain("Nothing is wrong with your question or your data");
  });

  it("a server that never answers: did not answer within the timeout, each try ended by it", async () => {
    server = await startOpenAIFixture({ replies: [], silent: {} });
    const error = await deskError(server.baseURL);
    expect(error.message).toBe(
      `The model did not answer: the model at ${server.baseURL} did not answer within 0.3 s (tried 2 times).`,
    );
    expect(error.fix).toContain("The model's server may be busy or stopped");
    expect(server.requests.length).toBe(2);
  });

  it("a refused connection: the base URL the desk tried, and that its server must run there (retried once)", async () => {
    // A fixture's port, closed again: nothing listens there.
    const closed = await startOpenAIFixture({ replies: [] });
    await closed.close();
    const error = await deskError(closed.baseURL);
    expect(error.message).toBe(
      `The desk could not reach the model at ${closed.baseURL} (ECONNREFUSED, tried 2 times).`,
    );
    expect(error.fix).toBe(
      "Check that the model's server is running and that this machine can reach it; whoever started the desk set its address.",
    );
  });

  it("none of them shows library advice, LangChain's link or an undici message", async () => {
    const causes = [{ status: 401 }, { status: 404 }, { status: 500 }].map((failures) => ({ failures }));
    for (const options of [...causes, { silent: {} }]) {
      server = await startOpenAIFixture({ replies: [], ...options });
      const error = await deskError(server.baseURL);
      expect(`${error.message} ${error.fix}`).not.toMatch(
        /withRetry|Troubleshooting URL|undici|attempts|\.\. /,
      );
      await server.close();
      server = undefined;
    }
  });
});
