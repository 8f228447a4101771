// A session's steps and thread from the command line (--steps, --no-state) and the environment.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stepsOption } from "../commands/question-options.ts";

/**
 * How a session's programs keep their state: `maxSteps` programs a question (--steps), and with
 * `thread` one live interpreter for the conversation (its id the session's), stored under
 * `store` (.codeaction/threads) when a resume secret signs it.
 */
export type SessionState = {
  maxSteps?: number | undefined;
  thread?: boolean | undefined;
  store?: { folder: string; secret: string } | undefined;
};

/**
 * The session's steps and thread: --steps, and (chat, the desk) one live interpreter for the
 * conversation unless --no-state; with CODEACTION_RESUME_SECRET set, the thread is kept signed
 * under .codeaction/threads, so it outlives a restart.
 */
export function sessionState(
  command: string,
  values: { steps?: string | undefined; "no-state"?: boolean | undefined },
  options: { thread: boolean; cwd: string; secret: string | undefined },
): SessionState {
  const thread = options.thread && values["no-state"] !== true;
  return {
    maxSteps: stepsOption(command, values.steps),
    thread,
    ...(thread && options.secret
      ? { store: { folder: join(options.cwd, ".codeaction", "threads"), secret: options.secret } }
      : {}),
  };
}

/**
 * A thread store for this process alone (the desk without CODEACTION_RESUME_SECRET): a private
 * folder made by mkdtemp (0700) and a random key held in memory, so the conversation's interpreter
 * comes back after the agent is rebuilt over an uploaded file; `remove` deletes it when the desk stops.
 * Nothing outlives the process but a folder of files only this user can read, if it is killed.
 */
export async function scratchThreadStore(
  state: SessionState,
): Promise<{ state: SessionState; remove: () => Promise<void> }> {
  if (!state.thread || state.store) return { state, remove: async () => {} };
  const folder = await mkdtemp(join(tmpdir(), "codeaction-desk-threads-"));
  const store = { folder, secret: randomBytes(32).toString("hex") };
  return { state: { ...state, store }, remove: () => rm(folder, { recursive: true, force: true }) };
}
