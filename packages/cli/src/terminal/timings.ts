// The timings lines of --show-program.
import type { Attempt } from "@codeaction/core";
import type { CliContext } from "../context.ts";

export function hasTimings<T extends { timings?: Attempt["timings"] }>(
  attempt: T,
): attempt is T & Pick<Attempt, "timings"> {
  return attempt.timings !== undefined;
}

export function showTimings(
  attempts: readonly Pick<Attempt, "attempt" | "status" | "timings">[],
  context: CliContext,
): void {
  for (const attempt of attempts) {
    const { modelMs, containerStartMs, runMs, totalMs } = attempt.timings;
    context.stderr.write(
      `timings, attempt ${attempt.attempt} (${attempt.status}): model ${seconds(modelMs)}, container start ${seconds(containerStartMs)}, run ${seconds(runMs)}, total ${seconds(totalMs)}\n`,
    );
  }
}

export function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(2)} s`;
}
