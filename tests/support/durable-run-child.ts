/**
 * One side of a durable run, in a process of its own (tests/durable-runs.docker.test.ts).
 *   node tests/support/durable-run-child.ts interrupt <state file> <program: plain|timed>
 *     runs a turn whose program calls lookup, then charge_card (the hook answers "interrupt"),
 *     writes the interrupted state to the file.
 *   node tests/support/durable-run-child.ts resume <state file> <decision as JSON>
 *     builds the same agent (a model with no replies: a model call would fail) and resumes.
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
const agent = await buildDurableAgent({
  replies,
  sandbox,
  tools,
  resumeSecret: process.env.DURABLE_TEST_SECRET,
});

let outcome: Record<string, unknown>;
try {
  const result =
    mode === "interrupt"
      ? await agent.invoke("Charge Ada her balance.")
      : await agent.resume(JSON.parse(readFileSync(stateFile, "utf8")), JSON.parse(argument));
  if (result.status === "interrupted") writeFileSync(stateFile, JSON.stringify(result.interrupt.state));
  outcome = {
    status: result.status,
    answer: result.answer,
    pending: result.interrupt?.pending,
    attemptStatuses: result.attempts.map((attempt) => attempt.status),
  };
} catch (error) {
  const failure = error as Error & { code?: string; reason?: string; made?: unknown; logged?: unknown };
  outcome = {
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
console.log(JSON.stringify({ ...outcome, calls, containersAsked, containersLeft }));
process.exit(0);
