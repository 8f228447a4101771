// What buildAgent gets from an agent session: the model, the data's tools, the servers, the sandbox
// of code-action, and what the front-end adds (its approval, a resumed run's key and used states).
import type { BuildAgentOptions, ModelOption } from "@codeaction/core";
import { preimportFor } from "../commands/question-options.ts";
import type { LoadedData } from "../data-files/csv-tools.ts";
import type { AgentExtras, SessionOptions, SessionPlan } from "./session-plan.ts";
import { type AgentModules, type SessionSandbox, sandboxOption } from "./session-sandbox.ts";

/** The agent's options for one session. */
export function agentOptions(parts: {
  plan: SessionPlan;
  options: SessionOptions;
  sandbox: SessionSandbox;
  data: LoadedData;
  model: ModelOption;
  modules: AgentModules;
  extras: AgentExtras;
}): BuildAgentOptions {
  const { plan, options, sandbox, data, extras } = parts;
  const [, { callsToReadAll }] = parts.modules;
  const { logger } = sandbox;
  const { approval, resumeSecret, usedStates } = extras;
  return {
    model: parts.model,
    pattern: options.pattern,
    extraTools: data.tools,
    ...(Object.keys(plan.servers).length > 0 ? { servers: plan.servers } : {}),
    ...(options.pattern === "code-action"
      ? {
          ...sandboxOption(sandbox),
          codeAction: {
            // Paging through a big CSV is legitimate: it must not use up the default 50 calls.
            maxToolCalls: 50 + data.tables.reduce((total, table) => total + callsToReadAll(table) - 1, 0),
            // Also in the sandbox, read-only: a program can read a big file directly instead of paging.
            dataFiles: data.sandboxFiles,
            preimport: preimportFor(sandbox.manager?.config.image ?? sandbox.image),
          },
        }
      : {}),
    ...(logger ? { logger } : {}),
    ...(approval ? { approval } : {}),
    ...(resumeSecret ? { resumeSecret } : {}),
    ...(usedStates ? { usedStates } : {}),
  };
}
