// Each dependency's share of a consumer's node_modules: which installed packages each of our
// packages' direct dependencies brings in, and their bytes. A package several dependencies share is
// counted once, under "shared". Read from `npm ls --all --json` and the folders on disk.
import { spawnSync } from "node:child_process";
import { join } from "node:path";

type LsNode = { version?: string; dependencies?: Record<string, LsNode> };

function folderBytes(path: string): number {
  const result = spawnSync("du", ["-sb", path], { encoding: "utf8" });
  return Number(result.stdout.split("\t")[0]) || 0;
}

/** Every package name reachable from `node` (itself excluded). */
function reachable(node: LsNode, into: Set<string>): Set<string> {
  for (const [name, child] of Object.entries(node.dependencies ?? {})) {
    if (into.has(name)) continue;
    into.add(name);
    reachable(child, into);
  }
  return into;
}

/**
 * Bytes per direct dependency of @codeaction/core, @codeaction/sandbox and @codeaction/cli in the
 * npm-installed `project`: what only it brings in (itself and its own dependencies), largest first.
 */
export function dependencyShares(project: string): { dependency: string; bytes: number; packages: number }[] {
  const listing = spawnSync("npm", ["ls", "--all", "--json"], {
    cwd: project,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const tree = JSON.parse(listing.stdout) as LsNode;
  const ours = ["@codeaction/core", "@codeaction/sandbox", "@codeaction/cli"];
  const direct = new Map<string, Set<string>>();
  for (const name of ours) {
    for (const [dependency, child] of Object.entries(tree.dependencies?.[name]?.dependencies ?? {})) {
      if (ours.includes(dependency)) continue;
      const set = direct.get(dependency) ?? new Set<string>();
      set.add(dependency);
      reachable(child, set);
      direct.set(dependency, set);
    }
  }
  const owners = new Map<string, string[]>();
  for (const [dependency, packages] of direct) {
    for (const name of packages) owners.set(name, [...(owners.get(name) ?? []), dependency]);
  }
  const totals = new Map<string, { bytes: number; packages: number }>();
  for (const [name, owning] of owners) {
    const key = owning.length === 1 ? owning[0]! : "shared by several";
    const total = totals.get(key) ?? { bytes: 0, packages: 0 };
    total.bytes += folderBytes(join(project, "node_modules", name));
    total.packages += 1;
    totals.set(key, total);
  }
  return [...totals]
    .map(([dependency, total]) => ({ dependency, ...total }))
    .sort((left, right) => right.bytes - left.bytes);
}
