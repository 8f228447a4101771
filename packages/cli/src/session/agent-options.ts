// What buildAgent gets from an agent session: the model, the data's tools, the servers, the sandbox
// of code-action, and what the front-end adds (its approval, a resumed run's key and used states).
import type { BuildAgentOptions, ModelOption, ThreadStore } from "@codeaction/core";
import { preimportFor } from "../commands/question-options.ts";
import type { LoadedData } from "../data-files/csv-tools.ts";
import type { AgentExtras, SessionOptions, SessionPlan } from "./session-plan.ts";
import { type AgentModules, type SessionSandbox, sandboxOption } from "./session-sandbox.ts";
import type { SessionState } from "./session-state.ts";

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
            ...stateSettings(options.state),
          },
          ...threadStoreOption(options.state, resumeSecret, parts.modules[0].createFileThreadStore),
        }
      : {}),
    ...(logger ? { logger } : {}),
    ...(approval ? { approval } : {}),
    ...(resumeSecret && !options.state?.store ? { resumeSecret } : {}),
    ...(usedStates ? { usedStates } : {}),
  };
}

/** codeAction's steps and state for the session's --steps and conversation thread. */
function stateSettings(state: SessionState | undefined): { maxSteps?: number; state?: "thread" } {
  return {
    ...(state?.maxSteps && state.maxSteps > 1 ? { maxSteps: state.maxSteps } : {}),
    ...(state?.thread ? { state: "thread" as const } : {}),
  };
}

/** With a conversation thread and a secret: the CLI's thread store, signed with that secret. */
function threadStoreOption(
  state: SessionState | undefined,
  resumeSecret: string | undefined,
  createStore: (folder: string) => ThreadStore,
): Pick<BuildAgentOptions, "threadStore" | "resumeSecret"> {
  if (!state?.thread || !state.store) return {};
  return {
    threadStore: createStore(state.store.folder),
    resumeSecret: resumeSecret ?? state.store.secret,
  };
}
