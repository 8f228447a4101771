import { measureState } from "../state.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only state`: steps and threads over the 1,000,000-row CSV (issue 42). */
export async function stateSection(context: SectionContext): Promise<void> {
  const { plan, progress, figure, ratio } = context;
  const section = "steps and threads: 1,000,000-row CSV (data image, pandas preimported)";
  const samples = await measureState({ rounds: plan.deskRounds, rows: 1_000_000, onProgress: progress });
  const fresh = figure(
    section,
    "(s1) the Q3 question asked fresh (read_csv + group-by): invoke",
    samples.fresh,
  );
  const follow = figure(
    section,
    "(s2) the same question as a follow-up in a thread (the frame loaded): invoke",
    samples.followUp,
  );
  const restored = figure(
    section,
    "(s3) the follow-up in a new agent: thread restored by re-execution, then answered: invoke",
    samples.restored,
  );
  const turn = figure(
    section,
    "(s4) a trivial program as a warm pooled turn: the attempt",
    samples.pooledTurn,
  );
  const step = figure(section, "(s5) the same program as a run's second step: the attempt", samples.step);
  figure(
    section,
    "(s6) an idle thread's container, the frame loaded (docker stats)",
    samples.idleThreadMiB,
    "MiB",
  );
  ratio(section, "(s2)/(s1) at p50", follow.p50 / fresh.p50, {
    text: "<= 0.1",
    met: follow.p50 / fresh.p50 <= 0.1,
  });
  ratio(section, "(s5)/(s4) at p50", step.p50 / turn.p50, {
    text: "<= 1.2",
    met: step.p50 / turn.p50 <= 1.2,
  });
  ratio(
    section,
    "(s3)/(s1) at p50",
    restored.p50 / fresh.p50,
    undefined,
    "restore re-reads the CSV: no checkpoint",
  );
}
