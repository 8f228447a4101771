import { tail } from "../prompt/prompt.ts";

/** Characters of a step's stdout (its end) the model is shown; stderr shows its last 3,000. */
export const observationCharacters = 8000;
const stderrCharacters = 3000;

/** The system prompt's paragraph on steps: shown when maxSteps is above 1 or state is "thread". */
export function stepsRules(options: { maxSteps: number; thread: boolean }): string {
  const lines = [
    "Working in steps: every program you write runs in the SAME live Python interpreter. Variables, imports,",
    "functions and data that earlier programs left are still there: build on them instead of loading or computing again.",
  ];
  if (options.maxSteps > 1) {
    lines.push(
      `You may take up to ${options.maxSteps} programs (steps) for this question. A program that prints no \`RESULT:\` line`,
      "and raises no error is a step: you are shown the end of its output and what the interpreter holds, and you",
      `write the next program. Print only what you need to see (you are shown the last ${observationCharacters} characters).`,
      "When you know the answer, print `RESULT: <answer>` as the last line.",
    );
  }
  if (options.thread) {
    lines.push("The interpreter also lives on between the questions of this conversation.");
  }
  lines.push(
    "A program that fails leaves what it set before the error; the corrected program runs in the same interpreter.",
  );
  return lines.join("\n");
}

/** What the interpreter holds, for the question's message: a thread's state from earlier questions. */
export function interpreterNote(options: { summary: string; lost?: string | undefined }): string | undefined {
  if (options.lost !== undefined) {
    return [
      `The interpreter of this conversation could not be restored (${options.lost}): it starts afresh,`,
      "and nothing earlier programs computed is there. Load what you need again.",
    ].join(" ");
  }
  if (!options.summary.trim()) return undefined;
  return [
    "The interpreter already holds (from earlier programs in this conversation):",
    "```",
    options.summary.trim(),
    "```",
  ].join("\n");
}

/** The message after a step: its output, what the interpreter holds now, and how many steps are left. */
export function buildStepObservation(options: {
  step: number;
  stepsLeft: number;
  stdout: string;
  stderr: string;
  summary: string;
  lost?: string | undefined;
}): string {
  return [
    `Step ${options.step} ran (no RESULT line yet). The end of its output:`,
    "```",
    tail(options.stdout, observationCharacters).trimEnd() || "(empty)",
    "```",
    ...(options.stderr.trim()
      ? ["stderr (end):", "```", tail(options.stderr, stderrCharacters).trimEnd(), "```"]
      : []),
    ...(options.lost === undefined
      ? ["The interpreter now holds:", "```", options.summary.trim() || "(nothing)", "```"]
      : [`The interpreter was lost and could not be restored (${options.lost}): it starts afresh.`]),
    "",
    options.stepsLeft > 0
      ? `Write the next program (${options.stepsLeft} step${options.stepsLeft === 1 ? "" : "s"} left, in the same interpreter), or print \`RESULT: <answer>\` if you know the answer.`
      : "This is the last step: the next program must print `RESULT: <answer>`.",
  ].join("\n");
}
