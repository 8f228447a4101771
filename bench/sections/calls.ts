import { measureToolCallCost } from "../tool-call-cost.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only calls`. */
export async function callsSection(context: SectionContext): Promise<void> {
  const { docker, plan, progress, figure, ratio, rows } = context;
  const section = "bridged tool call";
  const samples = await measureToolCallCost({
    docker,
    rounds: plan.callRounds,
    calls: plan.calls,
    referenceCalls: plan.referenceCalls,
    onProgress: progress,
  });
  const inProcess = figure(
    section,
    "(d) in-process (the floor)",
    samples.inProcess,
    "ms/call",
    `${plan.calls} calls x ${plan.callRounds}`,
  );
  const bridge = figure(
    section,
    "(e) our bridge",
    samples.bridge,
    "ms/call",
    `${plan.calls} calls in one program x ${plan.callRounds}`,
  );
  const reference = figure(
    section,
    "(f) reference protocol replica",
    samples.reference,
    "ms/call",
    `only ${plan.referenceCalls} calls x ${plan.callRounds}: it is slow`,
  );
  rows.push({
    section,
    figure: "(e) p50",
    p50: bridge.p50,
    unit: "ms/call",
    target: "< 5",
    met: bridge.p50 < 5,
  });
  ratio(section, "(f)/(e) at p50", reference.p50 / bridge.p50, {
    text: ">= 20",
    met: reference.p50 / bridge.p50 >= 20,
  });
  ratio(section, "(e)/(d) at p50", bridge.p50 / inProcess.p50);
}
