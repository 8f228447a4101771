/**
 * One hostile code-action turn in a process of its own, so that its memory and CPU are the turn's
 * alone. A benign turn first (module loading, the first container: not the subject), then the
 * hostile one, measured. Prints one JSON line.
 * Usage: node bench/hostile-child.ts <docker|gvisor> <attack name> <execTimeout seconds>
 */
import { buildAgent } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { fenced } from "./agents.ts";
import { type HostileAttack, hostileAttacks } from "./hostile-programs.ts";

const backend = (process.argv[2] ?? "docker") as "docker" | "gvisor";
const attack = process.argv[3] as HostileAttack;
const execTimeout = Number(process.argv[4] ?? "30");
if (!(attack in hostileAttacks)) throw new Error(`unknown attack ${JSON.stringify(attack)}`);

const echo = tool(async ({ value }) => ({ echoed: value ?? null }), {
  name: "echo",
  description: "Returns the value it was given.",
  schema: z.object({ value: z.unknown() }),
});
const oversized = tool(async () => "y".repeat(17 * 1024 * 1024), {
  name: "oversized",
  description: "Returns 17 MiB.",
  schema: z.object({}),
});
const agent = await buildAgent({
  model: new ScriptedChatModel([fenced('print("RESULT: 1")'), fenced(hostileAttacks[attack])]),
  pattern: "code-action",
  sandbox: { backend },
  extraTools: [echo, oversized],
  codeAction: { execTimeout, maxRepairs: 0 },
});

/**
 * The last attempt's host time outside the model, the container's start and the run: the read-back
 * of /workspace/out, and an upper bound of it (the attempt's other host work is in it too).
 */
let collectSeconds = 0;

/** One turn's status, whether it answered or threw. */
async function turn(): Promise<string> {
  try {
    const result = await agent.invoke({ messages: [{ role: "user", content: "Run it." }] });
    const timings = result.attempts.at(-1)?.timings;
    if (timings) {
      collectSeconds = (timings.totalMs - timings.modelMs - timings.containerStartMs - timings.runMs) / 1000;
    }
    return result.status;
  } catch (error) {
    const attempts = (error as { attempts?: Array<{ status: string }> }).attempts ?? [];
    return attempts.at(-1)?.status ?? (error as Error).name;
  }
}

try {
  const warmUp = await turn();
  if (warmUp !== "ok") throw new Error(`the benign turn did not succeed: ${warmUp}`);
  const rssBefore = process.memoryUsage().rss;
  const peakBefore = process.resourceUsage().maxRSS * 1024;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const status = await turn();
  const wallSeconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const peakAfter = process.resourceUsage().maxRSS * 1024;
  process.stdout.write(
    `${JSON.stringify({
      status,
      wallSeconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      // The process's peak RSS after the turn less its RSS before it: an upper bound of the turn's
      // growth (exact when the turn set a new peak, as every attack that costs memory does).
      rssGrowthBytes: Math.max(0, peakAfter - rssBefore),
      newPeak: peakAfter > peakBefore,
      collectSeconds,
    })}\n`,
  );
} finally {
  await agent.close().catch(() => undefined);
}
process.exit(0);
