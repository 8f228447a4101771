import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { ResumeStateError } from "../errors/resume-state-error.ts";
import { privateFolder } from "../private-file.ts";
import { canonicalJson, sha256Hex } from "./canonical-json.ts";
import type { RunState } from "./run-state.ts";

/**
 * Where the states already consumed are recorded: a state is resumed once. `markUsed` records a
 * state's nonce and resolves true, or resolves false when it was recorded before (the state was
 * consumed already). It must be one atomic step: of two callers with the same nonce, one gets true.
 */
export type UsedStates = { markUsed(nonce: string): Promise<boolean> };

/** The nonces this process consumed, at most this many (the oldest is forgotten first). */
const processNonceLimit = 100_000;
const processNonces = new Set<string>();

/**
 * The default: the states consumed in this process (every agent of the process shares it). It does
 * not reach other processes: across processes, take the state from a run store (its `take()` hands a
 * state out once, and never again even if its file is put back) or give `usedStates` a shared record
 * (`createFileUsedStates` on a folder both processes use).
 */
export const processUsedStates: UsedStates = {
  async markUsed(nonce) {
    if (processNonces.has(nonce)) return false;
    processNonces.add(nonce);
    if (processNonces.size > processNonceLimit) {
      processNonces.delete(processNonces.values().next().value as string);
    }
    return true;
  },
};

/**
 * Used nonces as files in `directory` (0700, created when missing): one empty file per nonce, created
 * 0600 with O_EXCL and O_NOFOLLOW, so of two processes marking the same nonce one wins, and a link
 * planted at a nonce's name is never followed (it counts as used).
 */
export function createFileUsedStates(directory: string): UsedStates {
  let ready: Promise<void> | undefined;
  return {
    async markUsed(nonce) {
      ready ??= privateFolder(directory, "give the used states a folder of their own");
      await ready;
      const name = /^[0-9a-f]{16,128}$/.test(nonce) ? nonce : sha256Hex(nonce);
      const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
      try {
        await (await open(join(directory, name), flags, 0o600)).close();
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
        throw error;
      }
    },
  };
}

/**
 * What identifies one state for its single use: its signed `nonce`, or for a state written before
 * nonces (or unsigned) its signature, else the digest of its content.
 */
export function stateNonce(state: RunState): string {
  if (typeof state.nonce === "string" && state.nonce !== "") return state.nonce;
  if (typeof state.signature === "string" && state.signature !== "") return state.signature;
  return sha256Hex(canonicalJson(state));
}

/** Records `state` as consumed, or throws a ResumeStateError ("consumed") when it was already. */
export async function consumeState(state: RunState, usedStates: UsedStates): Promise<void> {
  if (await usedStates.markUsed(stateNonce(state))) return;
  throw new ResumeStateError({
    reason: "consumed",
    message: `resume refused: this state of run ${state.runId} was resumed already (a state is used once; its nonce is recorded as used). Two resumes of one state would make the pending call twice. Resume from the newest state of the run (an interrupted resume returns a new one).`,
  });
}
