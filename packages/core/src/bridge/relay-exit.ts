import type { RelayExit } from "./bridge-options.ts";

/** The relay's exit report (frame X), checked field by field: it comes from the program's uid. */
export function parseExit(value: Record<string, unknown>): RelayExit {
  const count = (name: string): number => {
    const item = value[name];
    if (typeof item !== "number" || !Number.isSafeInteger(item) || item < 0) {
      throw new Error(`the exit report's ${name} is not a count`);
    }
    return item;
  };
  const exitCode = count("exitCode");
  const signal = value.signal;
  if (signal !== null && (typeof signal !== "number" || !Number.isSafeInteger(signal))) {
    throw new Error("the exit report's signal is not a number");
  }
  if (typeof value.killed !== "boolean") throw new Error("the exit report's killed flag is not a boolean");
  const entries = value.outputEntries;
  const summary = value.summary;
  return {
    exitCode,
    signal,
    killed: value.killed,
    stdoutBytes: count("stdoutBytes"),
    stderrBytes: count("stderrBytes"),
    ...(typeof entries === "number" && Number.isSafeInteger(entries) && entries >= 0
      ? { outputEntries: entries }
      : {}),
    ...(value.living === true ? { living: true } : {}),
    ...(value.living === true && typeof summary === "string"
      ? { summary: summary.slice(0, maxSummaryCharacters) }
      : {}),
  };
}

/** The longest interpreter summary the host keeps (the relay cuts at the same length). */
export const maxSummaryCharacters = 8000;
