import { totalmem } from "node:os";
import { type SandboxConfig, sizeInBytes } from "../config.ts";

/**
 * Live containers a manager may have at once: `maxConcurrent`, and no more than fit in
 * `maxTotalMemory` together. Every container of a manager has the same `memoryLimit`, so this keeps
 * the sum of their limits within the budget; a session past it waits in line like one past
 * `maxConcurrent`. Unset, the budget is this machine's memory (`hostMemory`), never less than one
 * container: limits that add up to more than the machine has promise memory it cannot give, and
 * the defaults (16 live containers of 4 GiB) would add up to 64 GiB.
 */
export function liveContainerLimit(
  config: Pick<SandboxConfig, "maxConcurrent" | "memoryLimit" | "maxTotalMemory">,
  hostMemory = totalmem(),
): number {
  const perContainer = sizeInBytes(config.memoryLimit);
  const budget = config.maxTotalMemory === undefined ? hostMemory : sizeInBytes(config.maxTotalMemory);
  return Math.max(1, Math.min(config.maxConcurrent, Math.floor(budget / perContainer)));
}
