// The first question's time over the desk's big file, phase by phase, from `ask --debug`'s lines
// (pino, one JSON object a line, each with its time in ms): the milestones on the way to the answer.

/** The phases, in order: each ends at its milestone (the last one at the process's exit). */
export const deskPhases = [
  "CLI start",
  "data file checks",
  "container",
  "placement or mount",
  "program",
  "answer",
] as const;
export type DeskPhase = (typeof deskPhases)[number];

/** The debug line that ends each phase but the last (the last of its kind counts). */
const milestones: [DeskPhase, string][] = [
  // The CLI's modules are loaded and the sandbox's prelaunch is under way.
  ["CLI start", "prelaunch worker entry"],
  // The data file's scan (types, rows) for the prompt.
  ["data file checks", "data file scanned"],
  // The prelaunched container taken over: every flag read back, its kill helper ready.
  ["container", "kill helper ready"],
  // Its files in place: mounted at its start, or copied (the worker's stream, or the turn's).
  ["placement or mount", "data files placed"],
  // The program ran (the model's reply is a replay: no wait).
  ["program", "program finished"],
];

/**
 * The data file scan's own time (ms, from its start to its table: `scanMs` on the "data file
 * scanned" line), whether or not it was on the critical path; undefined from a CLI that does not log it.
 */
export function scanMsOf(stderr: string): number | undefined {
  const line = stderr.split("\n").findLast((text) => text.includes('"msg":"data file scanned"'));
  const scanMs = line ? (JSON.parse(line) as { scanMs?: unknown }).scanMs : undefined;
  return typeof scanMs === "number" ? scanMs : undefined;
}

/**
 * Each phase's duration in ms: from the previous milestone (the spawn for the first) to its own,
 * never below 0 (phases that overlap, such as the scan and the container's start, count where
 * they end on the critical path). Throws when a milestone is missing from the debug output.
 */
export function phasesOf(stderr: string, spawnedAt: number, exitedAt: number): Record<DeskPhase, number> {
  const times = new Map<string, number>();
  for (const line of stderr.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const entry = JSON.parse(line) as { msg?: string; time?: number };
      if (typeof entry.msg === "string" && typeof entry.time === "number") times.set(entry.msg, entry.time);
    } catch {
      // A line that is not a log entry.
    }
  }
  const phases = {} as Record<DeskPhase, number>;
  let previous = spawnedAt;
  for (const [phase, message] of milestones) {
    const at = times.get(message);
    if (at === undefined) throw new Error(`desk breakdown: no "${message}" line in ask --debug's output`);
    phases[phase] = Math.max(0, at - previous);
    previous = Math.max(previous, at);
  }
  phases.answer = Math.max(0, exitedAt - previous);
  return phases;
}
