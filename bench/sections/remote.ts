import { measureRemoteEngines } from "../remote-engines.ts";
import type { Summary } from "../stats.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only remote`. */
export async function remoteSection(context: SectionContext): Promise<void> {
  const { plan, progress, figure, ratio } = context;
  const section = "remote engine (the local engine behind TLS and SSH)";
  const samples = await measureRemoteEngines({ rounds: plan.remoteRounds, calls: 100, onProgress: progress });
  const turns: Record<string, Summary> = {};
  const calls: Record<string, Summary> = {};
  for (const [name, measured] of Object.entries(samples)) {
    turns[name] = figure(
      section,
      `turn overhead, ${name}`,
      measured.turn,
      "ms",
      "warm container, instant model",
    );
    calls[name] = figure(
      section,
      `bridged call, ${name}`,
      measured.call,
      "ms/call",
      "100 calls in one program",
    );
  }
  for (const name of ["TLS", "SSH"]) {
    ratio(section, `turn ${name}/unix at p50`, turns[name]!.p50 / turns["unix socket"]!.p50);
    ratio(section, `call ${name}/unix at p50`, calls[name]!.p50 / calls["unix socket"]!.p50);
  }
}
