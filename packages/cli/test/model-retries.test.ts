import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type OpenAIFixture, startOpenAIFixture } from "@codeaction/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { runMain } from "./run-main.ts";

// `codeaction ask` (main(), in this process) against a local server answering in OpenAI's wire
// format: the server counts the requests that really reached it. --pattern tools needs no Docker.
// The waits before the retries are recorded and not spent (CliContext.wait): the schedule is what
// the command asked for, the retries are real requests.
let server: OpenAIFixture | undefined;
let waits: number[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  waits = [];
});

function ask(baseURL: string, extra: string[]) {
  return runMain(["ask", "--pattern", "tools", "--no-journal", ...extra, "What is 2 + 2?"], {
    env: { OPENAI_API_KEY: "fixture-key", OPENAI_BASE_URL: baseURL },
    wait: async (milliseconds) => {
      waits.push(milliseconds);
    },
  });
}

describe("codeaction ask: a failing model is retried as --retries says, and says so", {
  timeout: 120_000,
}, () => {
  it("--retries 2 against HTTP 500: three requests, each retry on stderr, a hint with the CLI's option", async () => {
    server = await startOpenAIFixture({ replies: [], failures: { status: 500 } });
    const run = await ask(server.baseURL, ["--retries", "2"]);
    expect(run.exitCode).toBe(1);
    expect(server.requests.length).toBe(3);
    expect(run.stderr).toContain("codeaction: the model answered HTTP 500; retry 1 of 2 in 1 s\n");
    expect(run.stderr).toContain("codeaction: the model answered HTTP 500; retry 2 of 2 in 2 s\n");
    expect(run.stderr).toContain(
      `The provider at ${server.baseURL} failed (HTTP 500), tried 3 times (--retries 2)`,
    );
    expect(run.stderr).toContain("give it more tries with --retries N");
    expect(run.stderr).not.toContain("withRetry");
    expect(run.stderr).not.toMatch(/\w\.\. /);
    expect(waits).toEqual([1000, 2000]);
  });

  it("--retries 0: one request, the model built from the provider string does not retry on its own", async () => {
    server = await startOpenAIFixture({ replies: [], failures: { status: 500 } });
    const run = await ask(server.baseURL, ["--retries", "0"]);
    expect(run.exitCode).toBe(1);
    expect(server.requests.length).toBe(1);
    expect(run.stderr).not.toContain("retry 1");
    expect(run.stderr).toContain("tried once (--retries 0)");
    expect(waits).toEqual([]);
  });

  it("by default a 500 is retried, with the CSV's tools bound through the retry, and the answer after it is the answer", async () => {
    server = await startOpenAIFixture({ replies: ["four"], failures: { status: 500, count: 1 } });
    const folder = await mkdtemp(join(tmpdir(), "codeaction-retries-"));
    try {
      await writeFile(join(folder, "numbers.csv"), "a,b\n2,2\n");
      const run = await ask(server.baseURL, ["--csv", join(folder, "numbers.csv")]);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stdout.trim()).toBe("four");
      expect(server.requests.length).toBe(2);
      expect(run.stderr).toContain("the model answered HTTP 500; retry 1 of 2 in 1 s");
      expect(waits).toEqual([1000]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it("a 401 is not retried: one request, and the hint names the key", async () => {
    server = await startOpenAIFixture({ replies: [], failures: { status: 401 } });
    const run = await ask(server.baseURL, ["--retries", "3"]);
    expect(run.exitCode).toBe(1);
    expect(server.requests.length).toBe(1);
    expect(run.stderr).toContain(`The model at ${server.baseURL} refused the key (HTTP 401)`);
    expect(run.stderr).toContain("Check the key (OPENAI_API_KEY");
  });

  it("one message per cause: 403 the key, 404 the model's name, 5xx the provider; none retried but the 5xx", async () => {
    for (const [status, message, requests] of [
      [403, /The model at \S+ refused the key \(HTTP 403\): .*Check the key \(OPENAI_API_KEY/, 1],
      [404, /The model at \S+ does not know the model gpt-x \(HTTP 404\): .*Check --model/, 1],
      [503, /The provider at \S+ failed \(HTTP 503\), tried 2 times \(--retries 1\): .*busy or down/, 2],
    ] as const) {
      server = await startOpenAIFixture({ replies: [], failures: { status } });
      const run = await ask(server.baseURL, ["--retries", "1", "--model", "gpt-x"]);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(/Troubleshooting URL|\.\. /);
      expect(server.requests.length).toBe(requests);
      await server.close();
      server = undefined;
    }
  });

  it("429 follows the provider's Retry-After (bounded to 60 s) and names the rate limit", async () => {
    server = await startOpenAIFixture({
      replies: [],
      failures: { status: 429, headers: { "retry-after": "7" } },
    });
    const run = await ask(server.baseURL, ["--retries", "1"]);
    expect(run.exitCode).toBe(1);
    expect(waits).toEqual([7000]);
    expect(run.stderr).toContain("the model answered HTTP 429 with Retry-After; retry 1 of 1 in 7 s");
    expect(run.stderr).toMatch(
      /The model at \S+ is limiting the rate of requests \(HTTP 429\), tried 2 times/,
    );
    expect(run.stderr).not.toMatch(/Troubleshooting URL|\.\. /);
    await server.close();
    server = await startOpenAIFixture({
      replies: [],
      failures: { status: 429, headers: { "retry-after": "86400" } },
    });
    waits = [];
    await ask(server.baseURL, ["--retries", "1"]);
    expect(waits).toEqual([60_000]);
  });

  it("a refused connection names the base URL it tried", async () => {
    const closed = await startOpenAIFixture({ replies: [] });
    await closed.close();
    const run = await ask(closed.baseURL, ["--retries", "1"]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(
      `Could not reach the model at ${closed.baseURL} (ECONNREFUSED), tried 2 times`,
    );
  });

  it("a server that accepts and never answers: each call ends at --model-timeout, is retried, and says so plainly", async () => {
    server = await startOpenAIFixture({ replies: [], silent: {} });
    const run = await ask(server.baseURL, ["--retries", "1", "--model-timeout", "0.2"]);
    expect(run.exitCode).toBe(1);
    expect(server.requests.length).toBe(2);
    expect(run.stderr).toContain("the model did not answer in time; retry 1 of 1 in 1 s");
    expect(run.stderr).toContain(
      `The model at ${server.baseURL} did not answer within 0.2 s, tried 2 times (--retries 1). Give it longer with --model-timeout SECONDS`,
    );
    expect(run.stderr).not.toMatch(/undici|withRetry/);
  });

  it("--retries takes a whole number from 0 to 10", async () => {
    const run = await runMain(["ask", "--retries", "1.5", "--pattern", "tools", "q"], {
      env: { OPENAI_API_KEY: "fixture-key" },
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("--retries must be a whole number");
  });
});
