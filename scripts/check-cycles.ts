// Fails when the TypeScript sources of a package import each other in a cycle (type-only imports
// included: a cycle of types is still a knot a reader must untangle; dynamic `import("./x.ts")` too:
// deferring a load does not untie the knot), and when a folder whose arrows must point one way imports
// what it must not (`layers`, below). Run by scripts/test.sh.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const importPattern = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']/g;
const dynamicImportPattern = /\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

/** Every non-test .ts file under a folder. */
function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sourceFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : [];
  });
}

/** The relative imports of one file, as absolute paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(importPattern), ...text.matchAll(dynamicImportPattern)].map((match) =>
    resolve(dirname(file), match[1] ?? ""),
  );
}

/** Depth-first search for back edges; returns each cycle once, as a list of files. */
export function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next) && graph.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

/**
 * Folders that may import only what is listed (paths from the repository's root; a folder covers
 * everything under it): durable runs are values and storage, below the bridge and the turn
 * (docs/architecture.md); the engine seam knows nothing of the sandbox above it.
 */
export const layers: ReadonlyArray<{ folder: string; mayImport: readonly string[] }> = [
  {
    folder: "packages/core/src/durable",
    mayImport: ["packages/core/src/durable", "packages/core/src/errors", "packages/core/src/private-file.ts"],
  },
  { folder: "packages/sandbox/src/engine", mayImport: ["packages/sandbox/src/engine"] },
];

const under = (path: string, place: string) => path === place || path.startsWith(`${place}/`);

/** Each import that leaves its layer, as "file -> imported" (paths relative to `base`). */
export function layerBreaks(graph: Map<string, string[]>, base: string, rules = layers): string[] {
  const breaks: string[] = [];
  for (const [file, imports] of graph) {
    const from = relative(base, file);
    const rule = rules.find((candidate) => under(from, candidate.folder));
    if (!rule) continue;
    for (const imported of imports.map((path) => relative(base, path))) {
      if (!rule.mayImport.some((place) => under(imported, place))) breaks.push(`${from} -> ${imported}`);
    }
  }
  return breaks;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const packagesDir = join(root, "packages");
  const graph = new Map<string, string[]>();
  for (const name of readdirSync(packagesDir)) {
    const src = join(packagesDir, name, "src");
    try {
      for (const file of sourceFiles(src)) graph.set(file, importsOf(file));
    } catch {
      // a package without src/
    }
  }
  const cycles = findCycles(graph);
  if (cycles.length > 0) {
    for (const cycle of cycles)
      console.error(`import cycle: ${cycle.map((file) => relative(root, file)).join(" -> ")}`);
    console.error("Break each cycle: move what both files need into a third module that imports neither.");
    process.exit(1);
  }
  const breaks = layerBreaks(graph, root);
  if (breaks.length > 0) {
    for (const line of breaks) console.error(`import across a layer: ${line}`);
    console.error(
      "Move what both need below the layer (scripts/check-cycles.ts lists what each layer may import).",
    );
    process.exit(1);
  }
  console.log(`no import cycles in ${graph.size} source files, and no import across a layer`);
}
