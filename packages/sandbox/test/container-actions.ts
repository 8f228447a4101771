import type Dockerode from "dockerode";
import { readAll } from "./read-all.ts";

/**
 * The engine's container actions ("create", "start", "kill", "die", ...) since `since` (seconds)
 * until a second from now, in order, for the containers `filters` picks (a label, an id).
 */
export async function containerActions(
  docker: Dockerode,
  since: number,
  filters: { label?: string[]; container?: string[] },
): Promise<string[]> {
  const stream = await docker.getEvents({
    since,
    until: Math.floor(Date.now() / 1000) + 1,
    filters: { type: ["container"], ...filters },
  });
  return (await readAll(stream))
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => (JSON.parse(line) as { Action: string }).Action);
}
