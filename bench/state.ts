// Steps and threads (issue 42), over the desk's 1,000,000-row CSV in the data image: a follow-up
// question in a thread against the same question asked fresh, a step against a pooled turn, a
// thread restored by re-execution in a new agent against the fresh question, and what an idle
// thread's container holds. The model is scripted; the programs are the analyst's.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Agent, buildAgent, createFileThreadStore } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { writeOrders } from "./desk.ts";

export type StateSamples = {
  fresh: number[];
  followUp: number[];
  restored: number[];
  pooledTurn: number[];
  step: number[];
  idleThreadMiB: number[];
};

const secret = "0123456789abcdef0123456789abcdef";
// Dates parsed and regions categorical as the frame loads, so that an answer over the loaded frame
// takes milliseconds (what a follow-up costs in a thread); both variants run this same code.
const load =
  'import pandas as pd\nframe = pd.read_csv("/workspace/data/orders.csv", parse_dates=["date"], dtype={"region": "category"})\n';
const q3 =
  'q3 = frame[(frame["date"] >= "2026-07-01") & (frame["date"] <= "2026-09-30")]\n' +
  'revenue = (q3["quantity"] * q3["unit_price"]).groupby(q3["region"], observed=True).sum().round(2)\n' +
  'print("RESULT: " + revenue.to_json())';

const fence = (program: string) => `\`\`\`python\n${program}\n\`\`\``;

/** An agent (over the CSV, when `path` is given) whose model answers with `programs`, in order. */
function agentWith(
  path: string | undefined,
  programs: string[],
  codeAction: Record<string, unknown>,
  store?: string,
): Promise<Agent> {
  return buildAgent({
    model: new ScriptedChatModel(programs.map(fence)),
    pattern: "code-action",
    sandbox: { image: "codeaction/python:3.11-data" },
    codeAction: {
      ...(path ? { dataFiles: [path] } : {}),
      preimport: ["pandas"],
      execTimeout: 300,
      ...codeAction,
    },
    ...(store ? { threadStore: createFileThreadStore(store), resumeSecret: secret } : {}),
  });
}

async function timed(work: () => Promise<{ answer: string }>): Promise<number> {
  const started = performance.now();
  const result = await work();
  if (!result.answer.includes("North America"))
    throw new Error(`bench state: unexpected answer ${result.answer}`);
  return performance.now() - started;
}

const ask = (agent: Agent, thread?: string) =>
  agent.invoke(
    { messages: [{ role: "user", content: "Q3 revenue per region?" }] },
    thread ? { configurable: { thread_id: thread } } : undefined,
  );

/** The memory an idle thread's container uses (docker stats), in MiB. */
function containerMiB(): number {
  const lines = execFileSync(
    "docker",
    ["stats", "--no-stream", "--format", "{{.MemUsage}}", ...containerIds()],
    { encoding: "utf8" },
  ).trim();
  const used = lines.split("\n").map((line) => line.split("/")[0]!.trim());
  const mib = used.map(
    (text) => Number.parseFloat(text) * (text.endsWith("GiB") ? 1024 : text.endsWith("KiB") ? 1 / 1024 : 1),
  );
  return Math.max(...mib);
}

function containerIds(): string[] {
  return execFileSync("docker", ["ps", "-q", "--filter", `label=codeaction.owner-pid=${process.pid}`], {
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean);
}

/** `rounds` rounds (after one uncounted), each measuring every variant once, interleaved. */
export async function measureState(options: {
  rounds: number;
  rows: number;
  onProgress?: (message: string) => void;
}): Promise<StateSamples> {
  const folder = await mkdtemp(join(tmpdir(), "codeaction-bench-state-"));
  const path = join(folder, "orders.csv");
  const samples: StateSamples = {
    fresh: [],
    followUp: [],
    restored: [],
    pooledTurn: [],
    step: [],
    idleThreadMiB: [],
  };
  try {
    await writeOrders(path, options.rows);
    for (let round = 0; round <= options.rounds; round += 1) {
      const keep = round > 0;
      const fresh = await agentWith(path, [load + q3], {});
      const freshMs = await timed(() => ask(fresh)).finally(() => fresh.close());
      // A thread: the first question loads the frame; the follow-up only computes.
      const store = join(folder, `threads-${round}`);
      const threaded = await agentWith(
        path,
        [`${load}print("RESULT: North America loaded")`, q3],
        { state: "thread" },
        store,
      );
      let followMs = 0;
      let idle = 0;
      try {
        await ask(threaded, "T");
        followMs = await timed(() => ask(threaded, "T"));
        // After the follow-up: `docker stats` samples the container for a second or two.
        idle = containerMiB();
      } finally {
        await threaded.close();
      }
      // The same thread in a new agent (a new process would do the same): restored by re-execution.
      const restoring = await agentWith(path, [q3], { state: "thread" }, store);
      const restoredMs = await timed(() => ask(restoring, "T")).finally(() => restoring.close());
      const { turn, step } = await stepAgainstTurn();
      if (keep) {
        samples.fresh.push(freshMs);
        samples.followUp.push(followMs);
        samples.restored.push(restoredMs);
        samples.idleThreadMiB.push(idle);
        samples.pooledTurn.push(turn);
        samples.step.push(step);
      }
      options.onProgress?.(`state round ${round}/${options.rounds}`);
    }
    return samples;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * A trivial program (no data file) as a warm pooled turn's only attempt, and as the second step of
 * a run: each attempt's totalMs (the model is scripted: the container and the program).
 */
async function stepAgainstTurn(): Promise<{ turn: number; step: number }> {
  const trivial = 'print("RESULT: North America")';
  const single = await agentWith(undefined, [trivial, trivial], {});
  const stepped = await agentWith(undefined, ['print("first")', trivial], { maxSteps: 2 });
  try {
    // The turn measured is the agent's second: the first took the pool's container, and the pool
    // has had 5 s to start and preimport its replacement, so the second is a warm pooled turn.
    await ask(single);
    await sleep(5_000);
    const turn = (await ask(single)).attempts.at(-1)!.timings.totalMs;
    const step = (await ask(stepped)).attempts.at(-1)!.timings.totalMs;
    return { turn, step };
  } finally {
    await Promise.allSettled([single.close(), stepped.close()]);
  }
}
