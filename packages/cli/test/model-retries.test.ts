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
    expect(run.stderr).toContain("The model call failed (HTTP 500), tried 3 times (--retries 2)");
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
    expect(run.stderr).toContain("The model call failed (HTTP 401)");
    expect(run.stderr).toContain("Check the model's key (OPENAI_API_KEY");
  });

  it("--retries takes a whole number from 0 to 10", async () => {
    const run = await runMain(["ask", "--retries", "1.5", "--pattern", "tools", "q"], {
      env: { OPENAI_API_KEY: "fixture-key" },
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("--retries must be a whole number");
  });
});
