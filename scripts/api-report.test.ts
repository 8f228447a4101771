import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  packageApi,
  publishedPackages,
  renderReport,
  reportPath,
  repositoryRoot,
  updateCommand,
} from "./api-report.ts";

// The public API is a contract: every export of every entry point is listed in the committed
// packages/<name>/api-report.txt, carries TSDoc, and is named in docs/api.md.

const apiDoc = readFileSync(join(repositoryRoot, "docs/api.md"), "utf8");

function exportLines(report: string): string[] {
  return report.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
}

describe.each(publishedPackages)("@codeaction/%s", (packageName) => {
  const api = packageApi(packageName);

  it("exports exactly what packages/<name>/api-report.txt lists", () => {
    const path = reportPath(packageName);
    const committed = existsSync(path) ? exportLines(readFileSync(path, "utf8")) : [];
    const current = exportLines(renderReport(packageName, api));
    const added = current.filter((line) => !committed.includes(line));
    const removed = committed.filter((line) => !current.includes(line));
    const fix =
      `The public API of @codeaction/${packageName} changed (added: ${JSON.stringify(added)}, removed: ${JSON.stringify(removed)}). ` +
      `If this is deliberate, run \`${updateCommand}\`, document each added export (TSDoc, and docs/api.md) and commit ` +
      `packages/${packageName}/api-report.txt. If not, take the export out of the entry point (tests reach internals by relative import).`;
    expect({ added, removed }, fix).toEqual({ added: [], removed: [] });
  });

  it("documents every export with TSDoc", () => {
    const undocumented = api.filter((item) => !item.documented).map((item) => `${item.entry} ${item.name}`);
    expect(undocumented, "add a /** ... */ comment to the declaration of each").toEqual([]);
  });

  it("names every export in docs/api.md", () => {
    const missing = api.filter((item) => !apiDoc.includes(`\`${item.name}\``)).map((item) => item.name);
    expect(missing, "add each to docs/api.md, under its package and entry point").toEqual([]);
  });
});
