/**
 * One side of a durable run, in a process of its own (tests/durable-runs.docker.test.ts).
 *   node tests/support/durable-run-child.ts interrupt <state file> <program: plain|timed>
 *     runs a turn whose program calls lookup, then charge_card (the hook answers "interrupt"),
 *     writes the interrupted state to the file.
 *   node tests/support/durable-run-child.ts resume <state file> <decision as JSON>
 *     builds the same agent (a model with no replies: a model call would fail) and resumes.
 *   node tests/support/durable-run-child.ts resume-twice <state file> <decision as JSON>
 *     the same, with two resumes of the state at once (`outcomes`: each one's status or error).
 * With DURABLE_TEST_NO_SECRET=1 the agent has no resumeSecret (`warnings`: the process's warnings).
 * The resume secret comes from DURABLE_TEST_SECRET. Prints one JSON line: the outcome, the calls
 * each tool got in this process, the containers asked for, and this process's containers left.
 */
import { readFileSync, writeFileSync } from "node:fs";
import {
  buildDurableAgent,
  containersLeftByThisProcess,
  durablePrograms,
  durableSandbox,
  ledgerTools,
} from "./durable-agent.ts";

const [mode, stateFile, argument] = process.argv.slice(2) as [string, string, string];
const { calls, tools } = ledgerTools();
const program = durablePrograms[argument as keyof typeof durablePrograms];
const replies = mode === "interrupt" ? [`\`\`\`python\n${program}\`\`\``] : [];
const sandbox = durableSandbox();
let containersAsked = 0;
const createSession = sandbox.createSession.bind(sandbox);
sandbox.createSession = (options) => {
  containersAsked += 1;
  return createSession(options);
};
const warnings: string[] = [];
process.on("warning", (warning) =>
  warnings.push(`${(warning as { code?: string }).code}: ${warning.message}`),
);
const agent = await buildDurableAgent({
  replies,
  sandbox,
  tools,
  resumeSecret: process.env.DURABLE_TEST_NO_SECRET === "1" ? undefined : process.env.DURABLE_TEST_SECRET,
});

/** Two resumes of one state at once: each one's status, or its error's reason. */
async function resumeTwice(): Promise<Record<string, unknown>> {
  const state = JSON.parse(readFileSync(stateFile, "utf8"));
  const settled = await Promise.allSettled([
    agent.resume(state, JSON.parse(argument)),
    agent.resume(structuredClone(state), JSON.parse(argument)),
  ]);
  const outcomes = settled.map((one) =>
    one.status === "fulfilled"
      ? one.value.status
      : `${(one.reason as Error).name}: ${(one.reason as { reason?: string }).reason}`,
  );
  return { outcomes: outcomes.sort() };
}

/** One invoke or resume: its status and answer. */
async function once(): Promise<Record<string, unknown>> {
  const result =
    mode === "interrupt"
      ? await agent.invoke("Charge Ada her balance.")
      : await agent.resume(JSON.parse(readFileSync(stateFile, "utf8")), JSON.parse(argument));
  if (result.status === "interrupted") writeFileSync(stateFile, JSON.stringify(result.interrupt.state));
  return {
    status: result.status,
    answer: result.answer,
    pending: result.interrupt?.pending,
    attemptStatuses: result.attempts.map((attempt) => attempt.status),
  };
}

const outcome = mode === "resume-twice" ? await resumeTwice() : await once().catch(failed);

function failed(error: unknown): Record<string, unknown> {
  const failure = error as Error & { code?: string; reason?: string; made?: unknown; logged?: unknown };
  return {
    error: failure.name,
    code: failure.code,
    reason: failure.reason,
    made: failure.made,
    logged: failure.logged,
    message: failure.message,
  };
}
const containersLeft = await containersLeftByThisProcess();
await agent.close();
await sandbox.close();
console.log(JSON.stringify({ ...outcome, calls, containersAsked, containersLeft, warnings }));
process.exit(0);
