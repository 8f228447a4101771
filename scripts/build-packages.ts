// Builds what is packed: each publishable package's src/ compiled to dist/ (JavaScript, declarations,
// source maps, declaration maps), plus the run-time files its asset table puts beside the code (the
// bridge's Python files: `besideCode` in packages/*/src/*-assets.ts), and the `codeaction` command's
// bundle (bundle-cli.ts). Always a clean build: dist/ is removed first, so nothing stale is ever packed.
// Usage: node scripts/build-packages.ts   (also `pnpm build`)
import { spawnSync } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { assetTables } from "./asset-tables.ts";
import { bundleCli } from "./bundle-cli.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
/** The publishable packages, in build order (each builds after what it depends on). */
export const publishedPackages = ["sandbox", "core", "cli"] as const;

/** Copies the files the package's asset table puts beside the code from src/ to dist/. */
function copyAssets(name: (typeof publishedPackages)[number]): string[] {
  const packageDirectory = join(root, "packages", name);
  const copied: string[] = [];
  for (const place of Object.values(assetTables[name])) {
    if (!("besideCode" in place)) continue;
    const to = join(packageDirectory, "dist", place.besideCode);
    cpSync(join(packageDirectory, "src", place.besideCode), to);
    copied.push(relative(root, to));
  }
  return copied;
}

async function build(): Promise<void> {
  for (const name of publishedPackages) {
    rmSync(join(root, "packages", name, "dist"), { recursive: true, force: true });
    rmSync(join(root, "packages", name, "node_modules/.cache/tsc/build.tsbuildinfo"), { force: true });
  }
  const configs = publishedPackages.map((name) => join("packages", name, "tsconfig.build.json"));
  const tsc = join(root, "node_modules/typescript/bin/tsc");
  const result = spawnSync(process.execPath, [tsc, "-b", ...configs], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    process.stderr.write(`[build] tsc -b failed (exit ${result.status}); fix the errors above.\n`);
    process.exit(1);
  }
  for (const name of publishedPackages) {
    const copied = copyAssets(name);
    process.stderr.write(
      `[build] packages/${name}/dist${copied.length ? ` (+ ${copied.join(", ")})` : ""}\n`,
    );
  }
  const bundled = await bundleCli(root);
  process.stderr.write(`[build] packages/cli/dist/bundle (${bundled.length} files, the command's bundle)\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await build();
