import { afterEach, describe, expect, it } from "vitest";
import { buildAgent } from "./build-agent.ts";
import { parseBuildAgentOptions } from "./build-agent-options.ts";
import { ConfigError } from "./errors/config-error.ts";
import { withDefaultPool } from "./program/code-action-sandbox.ts";
import { ScriptedChatModel } from "./testing/index.ts";

// Every refusal here happens before Docker is touched: these run without a Docker engine.
const model = new ScriptedChatModel([]);

async function refusal(options: unknown): Promise<Error> {
  const error = await buildAgent(options as never).catch((caught: unknown) => caught);
  expect(ConfigError.isInstance(error)).toBe(true);
  return error as Error;
}

const savedKey = process.env.OPENAI_API_KEY;
afterEach(() => {
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

describe("buildAgent options", () => {
  it("fills the codeAction defaults", () => {
    const options = parseBuildAgentOptions({ model, pattern: "code-action" });
    expect(options.codeAction).toEqual({
      execTimeout: 120,
      maxRepairs: 1,
      maxToolCalls: 50,
      maxRequestBytes: 1024 * 1024,
      maxResultBytes: 16 * 1024 * 1024,
      samples: 1,
      maxSteps: 1,
      state: "run",
      maxThreads: 8,
      idleSeconds: 600,
      decimals: 2,
      outputFiles: { maxFileBytes: 10 * 1024 * 1024, maxTotalBytes: 50 * 1024 * 1024, maxFiles: 20 },
      dataFiles: [],
      preimport: [],
      discovery: { maxStubTokens: 4000, maxTools: 40, maxSearches: 3, resultsPerQuery: 5 },
    });
    expect(parseBuildAgentOptions({ model }).pattern).toBe("tools");
  });

  it("gives code-action a warm pool of one container per sample unless pool is set (0 turns it off)", () => {
    expect(withDefaultPool({}, 1)).toEqual({ pool: 1 });
    expect(withDefaultPool({ network: "none" }, 3)).toEqual({ network: "none", pool: 3 });
    expect(withDefaultPool({ pool: 0 }, 2)).toEqual({ pool: 0 });
    expect(withDefaultPool({ pool: 4 }, 1)).toEqual({ pool: 4 });
  });

  it("refuses an unknown option, naming the valid ones and a likely spelling", async () => {
    const error = await refusal({ model, agent_pattern: "code-action" });
    expect(error.message).toContain("unknown option 'agent_pattern' (did you mean 'pattern'?)");
    expect(error.message).toContain(
      "Valid options: model, pattern, sandbox, extraTools, servers, codeAction",
    );
  });

  it("suggests the closest option for a typo, not only for another spelling", async () => {
    const error = await refusal({ model, pattern: "code-action", codeAction: { maxRepiars: 2 } });
    expect(error.message).toContain("unknown codeAction option 'maxRepiars' (did you mean 'maxRepairs'?)");
  });

  it("refuses an unknown codeAction key, naming the valid codeAction keys", async () => {
    const error = await refusal({ model, pattern: "code-action", codeAction: { exec_timeout: 60 } });
    expect(error.message).toContain("unknown codeAction option 'exec_timeout' (did you mean 'execTimeout'?)");
    expect(error.message).toContain(
      "Valid codeAction options: execTimeout, maxRepairs, maxToolCalls, maxRequestBytes, maxResultBytes, samples, maxSteps, state, maxThreads, idleSeconds, decimals, escalate",
    );
  });

  it("refuses codeAction with the tools pattern, and with no pattern", async () => {
    for (const pattern of ["tools", undefined]) {
      const error = await refusal({ model, pattern, codeAction: { maxRepairs: 2 } });
      expect(error.message).toContain(
        'codeAction only applies to pattern "code-action", but pattern is "tools"',
      );
    }
  });

  it("refuses an unknown pattern and bad values", async () => {
    expect((await refusal({ model, pattern: "react" })).message).toContain(
      'pattern must be "code-action" or "tools", got "react"',
    );
    expect(
      (await refusal({ model, pattern: "code-action", codeAction: { maxRepairs: -1 } })).message,
    ).toContain("codeAction.maxRepairs");
    expect((await refusal({ model: 42 })).message).toContain(
      'model must be a string like "openai:gpt-5-mini"',
    );
  });

  it("refuses a bad MCP server spec or name, naming the server and the field", async () => {
    const typo = await refusal({ model, servers: { files: { command: "node", arg: ["server.js"] } } });
    expect(typo.message).toBe(
      "buildAgent: MCP server 'files': unknown key 'arg' (did you mean 'args'?). A stdio server takes command, args, env, cwd, connectTimeoutMs, callTimeoutMs.",
    );
    const name = await refusal({ model, servers: { "my files": { command: "node" } } });
    expect(name.message).toContain("MCP server name 'my files' is not usable");
  });

  it("fails at build time when a model string's key is missing", async () => {
    delete process.env.OPENAI_API_KEY;
    const error = await refusal({ model: "openai:gpt-5-mini", pattern: "code-action" });
    expect(error.message).toContain('model "openai:gpt-5-mini" needs OPENAI_API_KEY, which is not set');
  });

  it("refuses a model string without a provider, and unknown providers", async () => {
    expect((await refusal({ model: "gpt-5-mini" })).message).toContain('Write it like "openai:gpt-5-mini"');
    expect((await refusal({ model: "acme:large" })).message).toMatch(
      /model provider "acme" is not known\. Known providers: openai, azure_openai, anthropic, .*groq/,
    );
  });
});
