// Refuses CLI source that reaches past @codeaction/core's public API: an import (static, dynamic,
// type-only or a re-export) of a core subpath that core's package.json does not export as public
// (`@codeaction/core/internal` included), or a relative path into core's own files. The command line
// is a user of the library like any other: what it needs, a library user needs too, and becomes
// public API (TSDoc, docs/api.md, the API report); what only the command needs lives in
// packages/cli (issue 44). Run by scripts/test.sh.
// Usage: node scripts/check-cli-boundary.ts [folder...]   (default: packages/cli/src)
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const corePackage = join(root, "packages", "core");

/** Every module specifier a file names: `from "x"`, `import("x")`, `import "x"`, `require("x")`. */
const specifierPatterns = [
  /\bfrom\s+["']([^"']+)["']/g,
  /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  /\bimport\s+["']([^"']+)["']/g,
  /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g,
];

export type BoundaryViolation = { file: string; line: number; specifier: string };

/** Core's public entry points, as specifiers: `@codeaction/core`, `@codeaction/core/testing`, ... */
export function publicCoreSpecifiers(): string[] {
  const manifest = JSON.parse(readFileSync(join(corePackage, "package.json"), "utf8")) as {
    exports: Record<string, unknown>;
  };
  return Object.keys(manifest.exports)
    .filter((subpath) => subpath !== "./package.json" && subpath !== "./internal")
    .map((subpath) => (subpath === "." ? "@codeaction/core" : `@codeaction/core/${subpath.slice(2)}`));
}

/** The imports of one file (its path and text) that reach past core's public entry points. */
export function boundaryViolations(
  file: string,
  text: string,
  allowed: readonly string[] = publicCoreSpecifiers(),
): BoundaryViolation[] {
  const violations: BoundaryViolation[] = [];
  for (const pattern of specifierPatterns) {
    for (const match of text.matchAll(pattern)) {
      const specifier = match[1] ?? "";
      const intoCore =
        specifier === "@codeaction/core" || specifier.startsWith("@codeaction/core/")
          ? !allowed.includes(specifier)
          : specifier.startsWith(".") && resolve(dirname(file), specifier).startsWith(`${corePackage}${sep}`);
      if (!intoCore) continue;
      const line = text.slice(0, match.index).split("\n").length;
      violations.push({ file, line, specifier });
    }
  }
  return violations.sort((left, right) => left.line - right.line);
}

/** Every .ts file under a folder (tests included: they are the CLI's source too). */
function typeScriptFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : typeScriptFiles(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const folders = process.argv.slice(2);
  const files = (folders.length > 0 ? folders : [join(root, "packages/cli/src")]).flatMap((folder) =>
    typeScriptFiles(resolve(folder)),
  );
  const allowed = publicCoreSpecifiers();
  const violations = files.flatMap((file) => boundaryViolations(file, readFileSync(file, "utf8"), allowed));
  if (violations.length > 0) {
    for (const { file, line, specifier } of violations) {
      console.error(
        `${relative(root, file)}:${line}: imports "${specifier}", which is not core's public API`,
      );
    }
    console.error(
      `The CLI uses @codeaction/core's public entry points only (${allowed.join(", ")}). ` +
        "Import the name from one of them; if it is not public, make it public in core where a library " +
        "user needs it too (TSDoc, docs/api.md, `node scripts/api-report.ts --write`), or move it into packages/cli.",
    );
    process.exit(1);
  }
  console.log(`no import past @codeaction/core's public API in ${files.length} CLI files`);
}
