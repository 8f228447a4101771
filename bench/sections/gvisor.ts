import type { SectionContext } from "./section.ts";
import { turnFigures } from "./turn.ts";

/** `pnpm bench --only gvisor`. */
export async function gvisorSection(context: SectionContext): Promise<void> {
  const { section, cold, defaults, pooled } = await turnFigures(context, "gvisor");
  context.ratio(section, "(b)/(d) at p50, gVisor", cold.p50 / pooled.p50);
  context.ratio(section, "(c)/(d) at p50, gVisor", defaults.p50 / pooled.p50, {
    text: "<= 1.5",
    met: defaults.p50 / pooled.p50 <= 1.5,
  });
}
