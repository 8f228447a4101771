import { describe, expect, it } from "vitest";
import { AbortError } from "./abort-error.ts";
import { AttemptsExhaustedError } from "./attempts-exhausted-error.ts";
import { BudgetExceededError } from "./budget-exceeded-error.ts";
import { CodeActionError } from "./code-action-error.ts";
import { ConfigError } from "./config-error.ts";
import { DisagreementError } from "./disagreement-error.ts";
import { InterruptRefusedError } from "./interrupt-refused-error.ts";
import { MaxIterationsError } from "./max-iterations-error.ts";
import { McpServerError } from "./mcp-server-error.ts";
import { McpToolError } from "./mcp-tool-error.ts";
import { ModelCallError } from "./model-call-error.ts";
import { SandboxRunError } from "./sandbox-run-error.ts";
import { SandboxUnavailableError } from "./sandbox-unavailable-error.ts";
import { ScriptedRepliesExhaustedError } from "./scripted-replies-exhausted-error.ts";
import { ToolCallingUnsupportedError } from "./tool-calling-unsupported-error.ts";
import { ToolInputError } from "./tool-input-error.ts";
import { ToolValueError } from "./tool-value-error.ts";

const cause = new Error("underneath");

// One of each, with the class name and code users match on.
const examples = [
  [AbortError, "AbortError", "aborted", new AbortError({ runId: "run_1", attempts: [], cause })],
  [
    AttemptsExhaustedError,
    "AttemptsExhaustedError",
    "attempts-exhausted",
    new AttemptsExhaustedError({ runId: "run_1", attempts: [] }),
  ],
  [
    BudgetExceededError,
    "BudgetExceededError",
    "budget-exceeded",
    new BudgetExceededError({
      runId: "run_1",
      limit: "maxModelCalls",
      budget: 1,
      usage: { modelCalls: 1, toolCalls: 0, attempts: 1, sandboxSeconds: 0 },
      elapsedSeconds: 1,
    }),
  ],
  [ConfigError, "ConfigError", "config", new ConfigError({ message: "wrong", cause })],
  [
    DisagreementError,
    "DisagreementError",
    "disagreement",
    new DisagreementError({ runId: "run_1", samples: [] }),
  ],
  [
    InterruptRefusedError,
    "InterruptRefusedError",
    "interrupt-refused",
    new InterruptRefusedError({
      runId: "run_1",
      reason: "samples",
      pending: { sequence: 1, tool: "t", args: {} },
      message: "refused",
    }),
  ],
  [
    MaxIterationsError,
    "MaxIterationsError",
    "max-iterations",
    new MaxIterationsError({ maxIterations: 1, pendingTools: [], messages: [], toolCalls: [] }),
  ],
  [
    McpServerError,
    "McpServerError",
    "mcp-server",
    new McpServerError({ serverName: "s", message: "down", cause }),
  ],
  [
    McpToolError,
    "McpToolError",
    "mcp-tool",
    new McpToolError({ serverName: "s", toolName: "t", message: "failed", isErrorResult: true }),
  ],
  [
    ModelCallError,
    "ModelCallError",
    "model-call",
    new ModelCallError({ runId: "run_1", attempts: [], cause }),
  ],
  [
    SandboxRunError,
    "SandboxRunError",
    "sandbox-run",
    new SandboxRunError({ runId: "run_1", attempts: [], cause, detail: "gone" }),
  ],
  [
    SandboxUnavailableError,
    "SandboxUnavailableError",
    "sandbox-unavailable",
    new SandboxUnavailableError({ what: "x", cause }),
  ],
  [
    ScriptedRepliesExhaustedError,
    "ScriptedRepliesExhaustedError",
    "scripted-replies-exhausted",
    new ScriptedRepliesExhaustedError({ callNumber: 1, replyCount: 0, lastMessage: "hi" }),
  ],
  [
    ToolCallingUnsupportedError,
    "ToolCallingUnsupportedError",
    "tool-calling-unsupported",
    new ToolCallingUnsupportedError({ modelName: "m" }),
  ],
  [
    ToolInputError,
    "ToolInputError",
    "tool-input-invalid",
    new ToolInputError({ tool: "t", issues: "a: required" }),
  ],
  [
    ToolValueError,
    "ToolValueError",
    "tool-value-unmappable",
    new ToolValueError({ tool: "t", path: "$", problem: "a function", fix: "return data" }),
  ],
] as const;

describe("core errors follow the sandbox's convention (base class, code union, branded isInstance)", () => {
  it("each keeps its class name and code, is a CodeActionError and an Error, and carries its cause", () => {
    for (const [, name, code, error] of examples) {
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(name);
      expect(error.code).toBe(code);
      expect(CodeActionError.isInstance(error)).toBe(true);
    }
    expect(new ConfigError({ message: "wrong", cause }).cause).toBe(cause);
    expect("cause" in new ConfigError({ message: "wrong" })).toBe(false);
  });

  it("each class's isInstance knows its own errors only: not another class's, nor a base error with its code", () => {
    for (const [errorClass, , code, own] of examples) {
      for (const [, , , other] of examples) expect(errorClass.isInstance(other)).toBe(other === own);
      expect(errorClass.isInstance(new CodeActionError("same code, base class", { code }))).toBe(false);
      expect(errorClass.isInstance({ code })).toBe(false);
      expect(errorClass.isInstance(undefined)).toBe(false);
    }
  });

  it("isInstance checks a Symbol.for brand, so an error from a duplicated copy of the package passes", () => {
    // What a second copy's ConfigError carries: the same global symbols, a different prototype chain.
    const fromOtherCopy = Object.assign(new Error("wrong"), {
      code: "config",
      [Symbol.for("codeaction.core.error")]: true,
      [Symbol.for("codeaction.core.config-error")]: true,
    });
    expect(ConfigError.isInstance(fromOtherCopy)).toBe(true);
    expect(CodeActionError.isInstance(fromOtherCopy)).toBe(true);
    expect(McpToolError.isInstance(fromOtherCopy)).toBe(false);
  });
});
