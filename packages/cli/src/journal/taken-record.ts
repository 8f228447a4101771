import type { LineOfFile } from "@codeaction/core/durable";
import type { OwnerIdentity } from "@codeaction/sandbox/internal";

/** Who took a run: the process's pid, start time, pid namespace, host and boot (the sandbox's OwnerIdentity). */
export type JournalTaker = OwnerIdentity;

/**
 * The journal's second kind of line, beside the run records (JournalRecord): `codeaction resume`
 * took run `runId`'s waiting state (the one with `nonce`) to resume it. Chained like every record,
 * so a taken line changed, planted or removed breaks the chain. It has no top-level `runId`: what
 * looks for a run's records (replay, the waiting run) passes over it.
 */
export type TakenRecord = {
  version: 1;
  taken: { runId: string; nonce: string } & Partial<JournalTaker> & { pid: number; at: string };
};

export type Take = TakenRecord["taken"];

export function takenRecord(
  runId: string,
  nonce: string,
  taker: Partial<JournalTaker> & { pid: number },
): TakenRecord {
  return { version: 1, taken: { runId, nonce, ...taker, at: new Date().toISOString() } };
}

/**
 * The take that holds run `runId`'s state with `nonce` now, if any: the newest taken line of that
 * run and state written after the run's last record. A record of the run after a take ends it: the
 * resumer journaled its answer, its refusal (the run waits again), or a new waiting state.
 */
export function lastTake(lines: readonly LineOfFile[], runId: string, nonce: string): Take | undefined {
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = parseLine(lines[index]!.text);
    if (line === undefined) continue;
    if (line.runId === runId) return undefined;
    const { taken } = line;
    if (isTake(taken) && taken.runId === runId && taken.nonce === nonce) return taken;
  }
  return undefined;
}

function parseLine(text: string): { runId?: unknown; taken?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

const identityFields = ["start", "pidNamespace", "host", "bootId"] as const;

function isTake(value: unknown): value is Take {
  if (typeof value !== "object" || value === null) return false;
  const take = value as Partial<Record<keyof Take, unknown>>;
  return (
    typeof take.runId === "string" &&
    typeof take.nonce === "string" &&
    typeof take.at === "string" &&
    typeof take.pid === "number" &&
    Number.isSafeInteger(take.pid) &&
    take.pid > 0 &&
    identityFields.every((field) => take[field] === undefined || typeof take[field] === "string")
  );
}
