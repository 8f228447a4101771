// The sandbox of one buildAgent: the manager (the caller's, or one made from the settings), made
// ready, shell mode's container started, and what the prompt says the sandbox has.
import { DATA_IMAGE, DEFAULT_IMAGE, type SandboxConfigInput, SandboxManager } from "@codeaction/sandbox";
import type { ParsedOptions } from "./build-agent-options.ts";
import { SandboxUnavailableError } from "./errors/sandbox-unavailable-error.ts";
import { createCodeActionSandbox } from "./program/code-action-sandbox.ts";
import { newSandboxManager } from "./program/new-sandbox-manager.ts";
import type { StartingSession } from "./tools-pattern/shell-tools.ts";

/** What one build holds while it assembles the agent, and what the agent's close() undoes. */
export type Build = {
  options: ParsedOptions;
  codeAction: boolean;
  /** The sandbox, for code-action and shell mode; parsing its settings starts nothing. */
  manager: SandboxManager | undefined;
  /** False for a SandboxManager the caller passed: the agent never closes it. */
  ownsManager: boolean;
  /** Run in parallel by close() (and when the build fails): the MCP servers first, then the sandbox. */
  cleanups: Array<() => Promise<void>>;
  /** Code-action containers still being removed; close() waits for them. */
  pendingRemovals: Set<Promise<void>>;
};

/** A build's state; code-action is warm by default: each pooled container starts the bridge relay ahead of need. */
export function newBuild(options: ParsedOptions): Build {
  const codeAction = options.pattern === "code-action";
  const shellMode = !codeAction && options.sandbox !== undefined;
  const manager = sandboxManagerFor(options, { codeAction, shellMode });
  // A manager the caller passed is theirs: the agent uses it and never closes it.
  const ownsManager = !(options.sandbox instanceof SandboxManager);
  return { options, codeAction, manager, ownsManager, cleanups: [], pendingRemovals: new Set() };
}

/**
 * Readies the sandbox (a SandboxUnavailableError when it cannot) and registers its removal. Shell
 * mode's container starts now and the agent is handed back at once: the start overlaps the first
 * model call, and the first tool call waits for what is left of it.
 */
export async function readySandbox(build: Build): Promise<StartingSession | undefined> {
  const { manager, options, pendingRemovals } = build;
  if (!manager) return undefined;
  const what = build.codeAction
    ? "pattern 'code-action'"
    : build.ownsManager
      ? `sandbox=${JSON.stringify(options.sandbox)}`
      : "the SandboxManager passed as sandbox";
  try {
    await manager.ready();
  } catch (error) {
    throw new SandboxUnavailableError({ what, cause: error });
  }
  const shellSession = build.codeAction ? undefined : startShellSession(manager, what);
  build.cleanups.push(async () => {
    await Promise.allSettled([...pendingRemovals]);
    const started = await shellSession?.started.catch(() => undefined);
    await started?.close();
    if (build.ownsManager) await manager.close();
  });
  return shellSession;
}

/** Shell mode's one container, starting in the background; a failed start names the sandbox and its cause. */
function startShellSession(manager: SandboxManager, what: string): StartingSession {
  const started = manager.createSession().catch((error: unknown) => {
    throw new SandboxUnavailableError({ what, cause: error });
  });
  // Seen by the first tool call (or by shutdown); never an unhandled rejection meanwhile.
  started.catch(() => undefined);
  return { config: manager.config, started };
}

/**
 * The agent's sandbox manager: the caller's own, or one made from the settings (parsing them starts
 * nothing; a wrong key fails here, before Docker is touched). Code-action's is warm by default, each
 * pooled container with the bridge relay started ahead of need.
 */
function sandboxManagerFor(
  options: ParsedOptions,
  mode: { codeAction: boolean; shellMode: boolean },
): SandboxManager | undefined {
  if (options.sandbox instanceof SandboxManager) return options.sandbox;
  const input: SandboxConfigInput =
    options.sandbox === undefined || options.sandbox === true ? {} : (options.sandbox as SandboxConfigInput);
  const logger = options.logger;
  if (mode.codeAction) {
    return createCodeActionSandbox(input, {
      samples: options.codeAction.samples,
      preimport: options.codeAction.preimport,
      ...(logger ? { logger } : {}),
    });
  }
  return mode.shellMode ? newSandboxManager(input, logger ? { logger } : {}) : undefined;
}

/** What the prompt says the sandbox has. */
export function describeSandbox(input: Pick<SandboxConfigInput, "image" | "network">): string {
  const image = input.image ?? DEFAULT_IMAGE;
  const packages =
    image === DATA_IMAGE
      ? "Python 3.11 with the standard library plus numpy, pandas, openpyxl and matplotlib (Agg backend: save figures with savefig; no pip installs)"
      : image === DEFAULT_IMAGE
        ? "Python 3.11 with the standard library only (no pandas, no numpy, no pip installs)"
        : `the image ${image} (Python 3 with what that image installs; no pip installs)`;
  const network = input.network ?? "none";
  const reach =
    network === "none"
      ? "no network"
      : network === "full"
        ? "full network access"
        : "network access to the hosts listed in rule 4 only";
  return `${packages}, and ${reach}`;
}
