import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConsumer } from "../tests/packaging/consumer-project.ts";
import { packPackages } from "../tests/packaging/pack-packages.ts";

/** The `codeaction` command as a user installs it, and the removal of its project. */
export type InstalledCli = { bin: string; remove: () => Promise<void> };

/**
 * The CLI as users get it, for the sections that time the command end to end: the packages built,
 * packed and installed with npm into a new project under /tmp (as the packaging test does), so
 * the compiled JavaScript runs, not the repository's TypeScript through type stripping.
 */
export async function installCli(onProgress?: (message: string) => void): Promise<InstalledCli> {
  const folder = await mkdtemp(join(tmpdir(), "codeaction-bench-installed-"));
  onProgress?.("installing the CLI from packed tarballs (npm), as a user would");
  const packed = await packPackages(join(folder, "tarballs"));
  const project = join(folder, "project");
  await createConsumer(project, "npm", packed);
  return {
    bin: join(project, "node_modules/@codeaction/cli/dist/bin.js"),
    remove: () => rm(folder, { recursive: true, force: true }),
  };
}
