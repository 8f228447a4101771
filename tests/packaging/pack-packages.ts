import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeRun, runCommand } from "./run-command.ts";

export const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url));
/** The publishable packages (folder names under packages/). */
export const publishedPackages = ["sandbox", "core", "cli"] as const;
export type PackedPackage = { name: (typeof publishedPackages)[number]; tarball: string; bytes: number };

/**
 * Builds the packages (unless scripts/test.sh already did: CODEACTION_PACKAGES_BUILT=1) and packs
 * each with `pnpm pack` into `destination`, as publishing would.
 */
export async function packPackages(destination: string): Promise<PackedPackage[]> {
  if (process.env.CODEACTION_PACKAGES_BUILT !== "1") {
    const build = await runCommand(process.execPath, ["scripts/build-packages.ts"], {
      cwd: repositoryRoot,
      timeoutMs: 600_000,
    });
    if (build.exitCode !== 0) throw new Error(`pnpm build failed: ${describeRun(build)}`);
  }
  const packed: PackedPackage[] = [];
  for (const name of publishedPackages) {
    const folder = await runPack(name, destination);
    const [tarball] = (await readdir(folder)).filter((file) => file.endsWith(".tgz"));
    if (!tarball) throw new Error(`pnpm pack wrote no tarball for packages/${name}`);
    const path = join(folder, tarball);
    packed.push({ name, tarball: path, bytes: (await stat(path)).size });
  }
  return packed;
}

async function runPack(name: string, destination: string): Promise<string> {
  const folder = join(destination, name);
  const pack = await runCommand("pnpm", ["pack", "--pack-destination", folder], {
    cwd: join(repositoryRoot, "packages", name),
    timeoutMs: 120_000,
  });
  if (pack.exitCode !== 0) throw new Error(`pnpm pack failed for packages/${name}: ${describeRun(pack)}`);
  return folder;
}
