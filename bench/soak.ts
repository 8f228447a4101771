/**
 * Soak: sequential code-action runs through buildAgent with a scripted model, watching for leaks.
 * Reports the containers this process owns, its open file descriptors (/proc/self/fd) and its RSS
 * at the start, every 100 runs and at the end, and checks that every run has its record.
 *
 *   node bench/soak.ts [runs=1000] [backend=docker] [pool=0]
 */
import { readdirSync, readFileSync } from "node:fs";
import { buildAgent } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { connectDocker } from "@codeaction/sandbox";
import { labelKeys } from "../packages/sandbox/src/container/labels.ts";

const runs = Number(process.argv[2] ?? "1000");
const backend = (process.argv[3] ?? "docker") as "docker" | "gvisor";
const pool = Number(process.argv[4] ?? "0");
if (!Number.isInteger(runs) || runs < 1)
  throw new Error(`runs must be a positive integer, got ${process.argv[2]}`);

const { docker } = await connectDocker();
const program = (index: number) =>
  `import json\nprint("RESULT:", json.dumps({"run": ${index}, "square": ${index} * ${index}}))`;

type Sample = {
  run: number;
  seconds: number;
  containers: number;
  fds: number;
  rssMiB: number;
  hostUsedMiB: number;
};

/** The host's memory in use (MemTotal - MemAvailable), in MiB: the engine's and the kernel's share too. */
function hostUsedMiB(): number {
  const meminfo = readFileSync("/proc/meminfo", "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(meminfo)?.[1] ?? NaN);
  return Math.round((field("MemTotal") - field("MemAvailable")) / 1024);
}
const started = performance.now();
const samples: Sample[] = [];
async function sample(run: number): Promise<void> {
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`${labelKeys.ownerPid}=${process.pid}`] },
  });
  const entry = {
    run,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    containers: containers.length,
    fds: readdirSync("/proc/self/fd").length,
    rssMiB: Math.round((process.memoryUsage().rss / 1024 / 1024) * 10) / 10,
    hostUsedMiB: hostUsedMiB(),
  };
  samples.push(entry);
  console.log(JSON.stringify(entry));
}

const agent = await buildAgent({
  model: new ScriptedChatModel(
    Array.from({ length: runs }, (_, index) => `\`\`\`python\n${program(index)}\n\`\`\``),
  ),
  pattern: "code-action",
  sandbox: { backend, network: "none", pool },
  codeAction: { maxRepairs: 0, execTimeout: 60 },
});

let recorded = 0;
const failures: string[] = [];
await sample(0);
for (let index = 0; index < runs; index += 1) {
  try {
    const result = await agent.invoke({ messages: [{ role: "user", content: `run ${index}` }] });
    const attempt = result.attempts[0];
    const expected = JSON.stringify({ run: index, square: index * index })
      .replaceAll(",", ", ")
      .replaceAll(":", ": ");
    if (result.attempts.length === 1 && attempt?.program === program(index) && result.answer === expected) {
      recorded += 1;
    } else {
      failures.push(`run ${index}: unexpected record (${result.answer})`);
    }
  } catch (error) {
    failures.push(`run ${index}: ${(error as Error).message.slice(0, 200)}`);
  }
  if ((index + 1) % 100 === 0) await sample(index + 1);
}
if (runs % 100 !== 0) await sample(runs);
await agent.close();
await sample(runs); // after shutdown: every container removed

const first = samples[0]!;
const last = samples.at(-1)!;
console.log(
  JSON.stringify({
    summary: {
      backend,
      runs,
      recorded,
      failures: failures.length,
      seconds: last.seconds,
      secondsPerRun: Math.round((last.seconds / runs) * 1000) / 1000,
      fds: { start: first.fds, end: last.fds, max: Math.max(...samples.map((entry) => entry.fds)) },
      rssMiB: {
        start: first.rssMiB,
        end: last.rssMiB,
        max: Math.max(...samples.map((entry) => entry.rssMiB)),
      },
      hostUsedMiB: {
        start: first.hostUsedMiB,
        end: last.hostUsedMiB,
        max: Math.max(...samples.map((entry) => entry.hostUsedMiB)),
      },
      containers: {
        max: Math.max(...samples.map((entry) => entry.containers)),
        afterShutdown: last.containers,
      },
    },
  }),
);
for (const failure of failures.slice(0, 20)) console.error(failure);
process.exit(failures.length === 0 && last.containers === 0 ? 0 : 1);
