import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ChatOpenAI } from "@langchain/openai";
import { afterEach, describe, expect, it } from "vitest";
import { buildAgent, ModelCallError } from "../src/index.ts";
import { startOpenAIFixture } from "../src/testing/index.ts";

// Issue 43 items 2 and 3 in the library: a failed model call says its cause, with the fix a library
// user has, through the real OpenAI client against local servers (a fixture that answers an HTTP
// error, one that accepts and never answers, a port nobody listens on).

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A model client of `baseURL` that does not retry on its own and waits at most `timeoutMs`. */
const clientOf = (baseURL: string, timeoutMs = 30_000) =>
  new ChatOpenAI({
    model: "gpt-test",
    apiKey: "sk-test",
    maxRetries: 0,
    timeout: timeoutMs,
    configuration: { baseURL },
  });

async function failureOf(model: ChatOpenAI): Promise<ModelCallError> {
  await using agent = await buildAgent({ model });
  const error = await agent.invoke("hi").catch((thrown: unknown) => thrown);
  expect(ModelCallError.isInstance(error), String(error)).toBe(true);
  return error as ModelCallError;
}

async function failingWith(status: number): Promise<ModelCallError> {
  const fixture = await startOpenAIFixture({ replies: [], failures: { status } });
  try {
    return await failureOf(clientOf(fixture.baseURL));
  } finally {
    await fixture.close();
  }
}

/** A server that reads each request and never answers it; its base URL. */
async function silentServer(): Promise<string> {
  const server = createServer((request) => request.resume());
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** A loopback port nobody listens on. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/v1`;
}

describe("ModelCallError: one message per cause, in the library", () => {
  it("401 and 403: the key", async () => {
    for (const status of [401, 403]) {
      const error = await failingWith(status);
      expect(error.failure).toEqual({ cause: "key", status });
      expect(error.message).toContain(`the model's server refused the key (HTTP ${status})`);
      expect(error.message).toContain("Check the API key the model was made with");
    }
  });

  it("404: the model's name; 429: the rate limit; 500: the provider", async () => {
    const missing = await failingWith(404);
    expect(missing.failure.cause).toBe("model-name");
    expect(missing.message).toContain("does not know the model (HTTP 404)");
    const limited = await failingWith(429);
    expect(limited.failure.cause).toBe("rate-limit");
    expect(limited.message).toContain("limiting the rate of requests (HTTP 429)");
    const down = await failingWith(500);
    expect(down.failure).toEqual({ cause: "provider", status: 500 });
    expect(down.message).toContain("the model's provider failed (HTTP 500)");
    for (const error of [missing, limited, down]) {
      expect(error.message).not.toContain("Check the model's key and name");
      expect(error.message).not.toMatch(/\.\./);
      expect(error.message).not.toContain("Troubleshooting URL");
    }
  });

  it("a server that never answers: no answer in time, with modelTimeout as the fix", async () => {
    const error = await failureOf(clientOf(await silentServer(), 500));
    expect(error.failure).toEqual({ cause: "timeout" });
    expect(error.message).toContain("the model did not answer in time");
    expect(error.message).toContain("modelTimeout");
    expect(error.message).not.toMatch(/\.\./);
  });

  it("no server at the base URL: unreachable, naming the code and the base URL to check", async () => {
    const error = await failureOf(clientOf(await closedPort()));
    expect(error.failure).toEqual({ cause: "unreachable", code: "ECONNREFUSED" });
    expect(error.message).toContain("no server answered for the model (ECONNREFUSED)");
    expect(error.message).toContain("OPENAI_BASE_URL");
  });
});
