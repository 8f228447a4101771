import { measureColdPath } from "../cold-path.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only cold`. */
export async function coldSection(context: SectionContext): Promise<void> {
  const { docker, plan, progress, figure } = context;
  for (const backend of ["docker", "gvisor"] as const) {
    const section = `cold path breakdown (${backend === "docker" ? "runc" : "gVisor"})`;
    const steps = await measureColdPath({
      docker,
      rounds: backend === "docker" ? plan.turnRounds : plan.gvisorRounds,
      backend,
      onProgress: progress,
    });
    for (const [step, values] of Object.entries(steps)) figure(section, step, values);
  }
}
