// The packages' `prepack`: refuses to pack a package whose build is missing or older than its
// sources, naming the files and the fix (`pnpm build` at the repository's root). Without it, `pnpm
// pack` on a fresh clone packed packages without dist/ (5 KB tarballs) and said nothing (issue 30).
// Usage (from a package's folder, as pnpm and npm run `prepack`): node ../../scripts/check-packed-build.ts
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

type Manifest = {
  name?: string;
  publishConfig?: { exports?: unknown; bin?: string | Record<string, string> };
};

/** Every file path (starting with ./) named anywhere in an exports or bin value. */
function namedFiles(value: unknown): string[] {
  if (typeof value === "string") return value.startsWith("./") ? [value] : [];
  if (value && typeof value === "object") return Object.values(value).flatMap(namedFiles);
  return [];
}

/** The newest .ts file under `folder` (tests aside), or undefined. */
function newestSource(folder: string): { path: string; mtimeMs: number } | undefined {
  let newest: { path: string; mtimeMs: number } | undefined;
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts") || entry.name.endsWith(".test.ts")) continue;
    const path = join(entry.parentPath, entry.name);
    const { mtimeMs } = statSync(path);
    if (!newest || mtimeMs > newest.mtimeMs) newest = { path, mtimeMs };
  }
  return newest;
}

/** Why the package in `folder` must not be packed as it is, or undefined when its build is in place. */
export function packProblem(folder: string): string | undefined {
  const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as Manifest;
  const name = manifest.name ?? folder;
  const outputs = [
    ...new Set([...namedFiles(manifest.publishConfig?.exports), ...namedFiles(manifest.publishConfig?.bin)]),
  ].filter((path) => path !== "./package.json");
  if (outputs.length === 0) return `${name}: publishConfig names no built file to check`;
  const missing = outputs.filter((path) => !existsSync(join(folder, path)));
  if (missing.length > 0) {
    return `${name} is not built: ${missing.join(", ")} missing. Run \`pnpm build\` at the repository's root, then pack again.`;
  }
  const oldest = Math.min(...outputs.map((path) => statSync(join(folder, path)).mtimeMs));
  const source = existsSync(join(folder, "src")) ? newestSource(join(folder, "src")) : undefined;
  if (source && source.mtimeMs > oldest) {
    return `${name}'s build is older than ${relative(folder, source.path)}: run \`pnpm build\` at the repository's root, then pack again.`;
  }
  return undefined;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problem = packProblem(process.cwd());
  if (problem) {
    console.error(`[prepack] ${problem}`);
    process.exitCode = 1;
  }
}
