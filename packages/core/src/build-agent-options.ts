// buildAgent's options: their types (the documented public surface), their zod schema, and the
// parse that refuses unknown keys with a "did you mean" and options that do not fit the pattern.
import { type SandboxConfigInput, SandboxManager } from "@codeaction/sandbox";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { Logger } from "pino";
import { z } from "zod";
import { type DiscoveryOptions, discoveryOptionsSchema } from "./discovery/discovery-options.ts";
import { defaultDiscoverySettings } from "./discovery/tool-index.ts";
import { checkResumeSecret } from "./durable/run-state.ts";
import type { UsedStates } from "./durable/used-states.ts";
import { ConfigError } from "./errors/config-error.ts";
import { checkServerSpecs, type ServerSpec } from "./mcp/index.ts";
import { isModelRunnable, type ModelOption } from "./model/model.ts";
import { defaultOutputFileLimits, type OutputFileLimits } from "./output/output-files.ts";
import { preimportSchema } from "./program/code-action-sandbox.ts";
import type { ThreadStore } from "./steps/file-thread-store.ts";
import { type AnswerShape, compileResponseFormat, type ResponseFormat } from "./structured-answer.ts";
import { closestName } from "./tools/unknown-keys.ts";
import {
  type ObserveBuildOptions,
  observeOptionsShape,
  refuseUnpricedBudget,
} from "./tracing/observe-options.ts";
import type { ApprovalHook } from "./types.ts";

/** Settings of the code-action pattern (`buildAgent({ codeAction })`): time, repairs, tool calls, samples, escalation. */
export type CodeActionOptions = {
  /** Seconds a program may run; approval waits do not count (default 120). */
  execTimeout?: number;
  /** Corrected programs after a failed one (default 1). */
  maxRepairs?: number;
  /** Tool calls per run, failed and unknown ones included (default 50). */
  maxToolCalls?: number;
  /** Largest tool call (request file) a program may send, in bytes (default 1 MiB). */
  maxRequestBytes?: number;
  /** Largest tool result the bridge hands back to a program, in bytes of JSON (default 16 MiB). */
  maxResultBytes?: number;
  /** Independent programs per question that must agree (default 1: no agreement check). */
  samples?: number;
  /**
   * Programs one question may take as steps (default 1: one program answers). Above 1, a program
   * that prints no RESULT line and raises no error is a step: the model sees its output and what the
   * interpreter holds, and writes the next program, which runs in the same interpreter
   * (docs/steps-and-threads.md). Past maxSteps, a StepLimitError.
   */
  maxSteps?: number;
  /**
   * "run" (default): a fresh interpreter per run (the steps of one run share it). "thread": one live
   * interpreter per `configurable.thread_id`, kept between invocations (docs/steps-and-threads.md).
   */
  state?: "run" | "thread";
  /** With state "thread": live threads at most; the least recently used is evicted first (default 8). */
  maxThreads?: number;
  /** With state "thread": seconds a thread's interpreter may sit unused before it is stopped (default 600). */
  idleSeconds?: number;
  /** Decimal places numbers are compared at when samples agree (default 2). */
  decimals?: number;
  /** A stronger model that writes one more program on disagreement or when every attempt failed. */
  escalate?: { model: ModelOption };
  /** Limits on the files a program saves under /workspace/out (defaults: 10 MiB each, 50 MiB in all, 20 files). */
  outputFiles?: Partial<OutputFileLimits>;
  /** Host files placed read-only in every sandbox at /workspace/data/<file name>, streamed in. */
  dataFiles?: string[];
  /**
   * Python modules the program's interpreter imports while it waits for the program (it starts
   * ahead of need), such as `["pandas"]` on the data image: a program that imports them finds them
   * loaded, and their import time leaves the run. Each costs its memory in every container, used or
   * not (pandas: about 60 MiB); a module that fails to import is left for the program's own import
   * to report. Default: none. A manager passed as `sandbox` needs the same list
   * (`createCodeActionSandbox(config, { preimport })`), or its warm interpreters go unused.
   */
  preimport?: string[];
  /**
   * Progressive discovery for large catalogues: above `maxTools` tools (default 40) or stubs
   * estimated above `maxStubTokens` tokens (default 4,000), the prompt carries a compact index and
   * the model looks functions up with a ```search reply before it writes its program
   * (docs/code-action.md). `false`: every stub in the prompt, always.
   */
  discovery?: DiscoveryOptions;
};

/** Everything `buildAgent` takes; unknown keys are refused with a "did you mean" hint (ConfigError). */
export type BuildAgentOptions = ObserveBuildOptions & {
  /**
   * "<provider>:<model>" ("openai:gpt-5-mini", "anthropic:claude-sonnet-4-5"; the provider's package
   * is loaded on demand), any @langchain/core chat model, or a Runnable wrapping one (withRetry,
   * withFallbacks, withConfig).
   */
  model: ModelOption;
  /**
   * Seconds one model call may take, for a model given as a "<provider>:<model>" string (default 90):
   * past it the call fails as a timeout (the provider's client's error) instead of waiting for a
   * provider that never answers. A chat model instance you build keeps its own timeout.
   */
  modelTimeout?: number;
  /** "tools" (default): a tool-calling loop. "code-action": one Python program per turn in a container. */
  pattern?: "code-action" | "tools";
  /**
   * Sandbox settings. With code-action: the programs' containers (default { network: "none" }, and a
   * warm pool of one container per sample: `pool: 0` turns it off). With tools: shell mode.
   * A `SandboxManager` (e.g. from `createCodeActionSandbox`) is used as it is and shared: the agent
   * never closes it, its owner calls `close()`.
   */
  sandbox?: true | SandboxConfigInput | SandboxManager;
  /** LangChain tools (zod schemas) the agent may call. */
  extraTools?: StructuredToolInterface[];
  /** MCP servers whose tools the agent may call. */
  servers?: Record<string, ServerSpec>;
  /** Only with pattern "code-action". */
  codeAction?: CodeActionOptions;
  /** Gates every tool call (bridged calls too). */
  approval?: ApprovalHook;
  /** System text for the model. */
  instructions?: string;
  /** A pino logger; silent without one. */
  logger?: Logger;
  /** Tools pattern: print each call and a shortened result. */
  traceTools?: boolean;
  /** Tools pattern: model turns before giving up (default 25). */
  maxIterations?: number;
  /**
   * The key that signs interrupted runs' states and checks them on `agent.resume()` (HMAC-SHA256; at
   * least 16 bytes, 32 random bytes recommended). Without it, states are unsigned and resume refuses
   * them unless told `trustUnsignedState` (docs/durable-runs.md).
   */
  resumeSecret?: string | Uint8Array;
  /**
   * Where `agent.resume()` records the states it consumed, so that a state is resumed once: the
   * second resume of it is refused (ResumeStateError "consumed") before anything starts. Default:
   * this process's record. Give `createFileUsedStates(folder)` (or your own, atomic) to reach every
   * process that resumes.
   */
  usedStates?: UsedStates;
  /**
   * With codeAction.state "thread": where threads' histories are kept, so a thread whose process
   * ended (or that was evicted) is restored on its next question in any process with the same store
   * and resumeSecret (`createFileThreadStore(folder)`; docs/steps-and-threads.md). Needs resumeSecret.
   */
  threadStore?: ThreadStore;
  /**
   * The shape of the answer, as LangChain's createAgent takes it: a zod schema or a JSON Schema.
   * The model is told it, the answer is parsed as JSON and checked (a mismatch is sent back to be
   * repaired, naming each path), and `result.structured` is the checked value, typed from a zod schema.
   */
  responseFormat?: ResponseFormat;
};

const modelSchema = z.union([z.string().min(1), z.custom<ModelOption>(isModelRunnable)], {
  error:
    'model must be a string like "openai:gpt-5-mini" or "anthropic:claude-sonnet-4-5", a @langchain/core chat model, or a Runnable wrapping one',
});

const codeActionSchema = z.strictObject({
  execTimeout: z.number().positive().max(86_400).default(120),
  maxRepairs: z.number().int().min(0).max(20).default(1),
  maxToolCalls: z.number().int().min(0).default(50),
  maxRequestBytes: z
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  maxResultBytes: z
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(16 * 1024 * 1024),
  samples: z.number().int().min(1).max(9).default(1),
  maxSteps: z.number().int().min(1).max(50).default(1),
  state: z
    .enum(["run", "thread"], {
      error: (issue) => `codeAction.state must be "run" or "thread", got ${JSON.stringify(issue.input)}`,
    })
    .default("run"),
  maxThreads: z.number().int().min(1).max(256).default(8),
  idleSeconds: z
    .number()
    .positive()
    .max(7 * 86_400)
    .default(600),
  decimals: z.number().int().min(0).max(12).default(2),
  escalate: z.strictObject({ model: modelSchema }).optional(),
  outputFiles: z
    .strictObject({
      maxFileBytes: z.number().int().positive().default(defaultOutputFileLimits.maxFileBytes),
      maxTotalBytes: z.number().int().positive().default(defaultOutputFileLimits.maxTotalBytes),
      maxFiles: z.number().int().min(0).default(defaultOutputFileLimits.maxFiles),
    })
    .default(defaultOutputFileLimits),
  /** Host files placed read-only in every sandbox at /workspace/data/<file name>. */
  dataFiles: z.array(z.string().min(1)).default([]),
  preimport: preimportSchema,
  discovery: discoveryOptionsSchema,
});

const isTool = (value: unknown) =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { name?: unknown }).name === "string" &&
  typeof (value as { invoke?: unknown }).invoke === "function";

const optionsSchema = z.strictObject({
  model: modelSchema,
  pattern: z
    .enum(["code-action", "tools"], {
      error: (issue) => `pattern must be "code-action" or "tools", got ${JSON.stringify(issue.input)}`,
    })
    .default("tools"),
  sandbox: z
    .union([z.literal(true), z.instanceof(SandboxManager), z.record(z.string(), z.unknown())], {
      error:
        "sandbox must be true, an object of sandbox settings (see @codeaction/sandbox) or a SandboxManager",
    })
    .optional(),
  extraTools: z
    .array(z.custom<StructuredToolInterface>(isTool, { error: "extraTools must hold @langchain/core tools" }))
    .default([]),
  servers: z
    .record(
      z.string(),
      z.custom<ServerSpec>((value) => typeof value === "object" && value !== null),
    )
    .optional(),
  codeAction: codeActionSchema.optional(),
  approval: z
    .custom<ApprovalHook>((value) => typeof value === "function", { error: "approval must be a function" })
    .optional(),
  instructions: z.string().optional(),
  logger: z
    .custom<Logger>(
      (value) => typeof value === "object" && value !== null && typeof (value as Logger).child === "function",
      {
        error: "logger must be a pino logger",
      },
    )
    .optional(),
  traceTools: z.boolean().optional(),
  resumeSecret: z
    .union([z.string(), z.instanceof(Uint8Array)], { error: "resumeSecret must be a string or a Uint8Array" })
    .refine((secret) => checkResumeSecret(secret) === undefined, {
      error: (issue) => checkResumeSecret(issue.input as string) ?? "resumeSecret is too short",
    })
    .optional(),
  usedStates: z
    .custom<UsedStates>(
      (value) =>
        typeof value === "object" && value !== null && typeof (value as UsedStates).markUsed === "function",
      { error: "usedStates must have markUsed(nonce): Promise<boolean>" },
    )
    .optional(),
  threadStore: z
    .custom<ThreadStore>(
      (value) =>
        typeof value === "object" &&
        value !== null &&
        ["read", "write", "remove"].every(
          (name) => typeof (value as Record<string, unknown>)[name] === "function",
        ),
      { error: "threadStore must have read, write and remove (createFileThreadStore(folder))" },
    )
    .optional(),
  modelTimeout: z.number().positive({ error: "modelTimeout is in seconds, above 0 (default 90)" }).optional(),
  maxIterations: z.number().int().min(1).optional(),
  responseFormat: z
    .custom<ResponseFormat>((value) => typeof value === "object" && value !== null && !Array.isArray(value), {
      error: "responseFormat must be a zod schema or a JSON Schema object",
    })
    .optional(),
  ...observeOptionsShape,
});

const optionNames = Object.keys(optionsSchema.shape);
const codeActionOptionNames = Object.keys(codeActionSchema.shape);
/** The keys of the option objects inside codeAction, for the "did you mean" of an unknown one. */
const nestedOptionNames: Record<string, string[]> = {
  "codeAction.escalate": ["model"],
  "codeAction.outputFiles": Object.keys(defaultOutputFileLimits),
  "codeAction.discovery": Object.keys(defaultDiscoverySettings),
};

/** Validates the options, refusing unknown keys with the valid ones listed. Starts nothing. */
export function parseBuildAgentOptions(input: unknown) {
  const parsed = optionsSchema.safeParse(input);
  if (!parsed.success) {
    throw new ConfigError({
      message: `buildAgent: ${parsed.error.issues.map(describeIssue).join("; ")}`,
      cause: parsed.error,
    });
  }
  const options = parsed.data;
  // MCP server names and specs: refused here, before any server or container starts.
  if (options.servers) {
    try {
      checkServerSpecs(options.servers);
    } catch (error) {
      throw new ConfigError({ message: `buildAgent: ${(error as Error).message}`, cause: error });
    }
  }
  refusePatternMismatch(options);
  refuseUnpricedBudget(options);
  const codeAction = codeActionSchema.parse(options.codeAction ?? {});
  refuseSamplesWithSteps(codeAction);
  refuseThreadStoreMisuse(options, codeAction.state);
  return {
    ...options,
    codeAction,
    answerShape: options.responseFormat ? compileFormat(options.responseFormat) : undefined,
  };
}

function compileFormat(format: ResponseFormat): AnswerShape {
  try {
    return compileResponseFormat(format);
  } catch (error) {
    throw new ConfigError({ message: `buildAgent: ${(error as Error).message}`, cause: error });
  }
}

/** Options that would do nothing for the chosen pattern are refused, not ignored. */
function refusePatternMismatch(options: {
  pattern: string;
  codeAction?: unknown;
  traceTools?: boolean;
  maxIterations?: number;
}) {
  if (options.pattern === "code-action") {
    const toolsOnly = (["traceTools", "maxIterations"] as const).filter(
      (name) => options[name] !== undefined,
    );
    if (toolsOnly.length > 0) {
      throw new ConfigError({
        message: `buildAgent: ${toolsOnly.join(" and ")} only apply to pattern "tools", but pattern is "code-action" (its limits are codeAction.maxRepairs and codeAction.maxToolCalls; its steps show in stream()). Remove ${toolsOnly.join(" and ")}.`,
      });
    }
  }
  if (options.codeAction && options.pattern !== "code-action") {
    throw new ConfigError({
      message: `buildAgent: codeAction only applies to pattern "code-action", but pattern is "${options.pattern}". Set pattern: "code-action" or remove codeAction.`,
    });
  }
}

/** Samples that must agree and one live interpreter do not mix: which sample's state would persist? */
function refuseSamplesWithSteps(codeAction: { samples: number; maxSteps: number; state: string }) {
  if (codeAction.samples === 1 || (codeAction.maxSteps === 1 && codeAction.state === "run")) return;
  const steps =
    codeAction.maxSteps > 1 ? `codeAction.maxSteps: ${codeAction.maxSteps}` : 'codeAction.state: "thread"';
  throw new ConfigError({
    message: `buildAgent: codeAction.samples: ${codeAction.samples} cannot be combined with ${steps}: samples are independent programs that must agree, and steps and threads keep one interpreter whose state the next program builds on. Use samples: 1 with steps or threads, or maxSteps: 1 and state: "run" with samples.`,
  });
}

/** A thread store is only for threads, and only with a key to sign what it keeps. */
function refuseThreadStoreMisuse(options: { threadStore?: unknown; resumeSecret?: unknown }, state: string) {
  if (options.threadStore === undefined) return;
  if (state !== "thread") {
    throw new ConfigError({
      message:
        'buildAgent: threadStore keeps threads, but codeAction.state is "run". Set codeAction.state: "thread", or remove threadStore.',
    });
  }
  if (options.resumeSecret === undefined) {
    throw new ConfigError({
      message:
        "buildAgent: threadStore needs resumeSecret: a stored history is re-executed with its tool results taken as they are stored, so it must be signed. Pass resumeSecret (32 random bytes, e.g. `openssl rand -hex 32`).",
    });
  }
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length > 0 ? issue.path.join(".") : "";
  if (issue.code === "unrecognized_keys") {
    const valid = where === "codeAction" ? codeActionOptionNames : (nestedOptionNames[where] ?? optionNames);
    const keys = issue.keys.map((key) => `'${key}'${hintFor(key, valid)}`).join(", ");
    const scope = where ? `${where} option` : "option";
    return `unknown ${scope}${issue.keys.length > 1 ? "s" : ""} ${keys}. Valid ${where ? `${where} ` : ""}options: ${valid.join(", ")}`;
  }
  return where ? `${where}: ${issue.message}` : issue.message;
}

/** "exec_timeout" -> " (did you mean 'execTimeout'?)" (the same matching as tools' argument keys). */
function hintFor(key: string, valid: string[]): string {
  const match = closestName(key, valid);
  if (match) return ` (did you mean '${match}'?)`;
  if (key === "agentPattern" || key === "agent_pattern") return " (did you mean 'pattern'?)";
  return "";
}

export type ParsedOptions = ReturnType<typeof parseBuildAgentOptions>;
