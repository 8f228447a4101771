// The public API report: every export of every entry point of the published packages, one line each
// (entry point, name, kind), committed as packages/<name>/api-report.txt. The unit test
// scripts/api-report.test.ts fails when an entry point's exports differ from the committed list, so
// the surface only changes on purpose. It also lists exports that lack TSDoc or a docs/api.md entry.
// Usage: node scripts/api-report.ts            print the reports
//        node scripts/api-report.ts --write    rewrite packages/*/api-report.txt
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
// TypeScript 7 (the compiler the repository builds with) has no JavaScript parser API; TypeScript
// 5.9's parser, installed as `typescript5`, reads the sources here (docs/api.md, "Versions").
import ts from "typescript5";

export const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
export const updateCommand = "node scripts/api-report.ts --write";
/** The published packages and their entry points (the keys of `exports` in package.json). */
export const publishedPackages = ["sandbox", "core", "cli"] as const;

export type ApiExport = { entry: string; name: string; kind: "value" | "type"; documented: boolean };

/** The entry points of a package: `exports` subpath to source file. */
function entryPoints(packageName: string): [string, string][] {
  const manifestPath = join(repositoryRoot, "packages", packageName, "package.json");
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { exports: Record<string, string> };
  return Object.entries(manifest.exports).map(([subpath, file]) => [
    subpath,
    join(repositoryRoot, "packages", packageName, file),
  ]);
}

const parsed = new Map<string, ts.SourceFile>();
function parse(path: string): ts.SourceFile {
  let file = parsed.get(path);
  if (!file) {
    file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
    parsed.set(path, file);
  }
  return file;
}

/** The source file a module specifier names: relative, or one of our packages' main entry. */
function moduleFile(from: string, specifier: string): string {
  const ours = /^@codeaction\/([a-z-]+)$/.exec(specifier);
  if (ours) return join(repositoryRoot, "packages", ours[1]!, "src/index.ts");
  return resolve(dirname(from), specifier);
}

function hasDocComment(node: ts.Node): boolean {
  return ts.getJSDocCommentsAndTags(node).some((doc) => ts.isJSDoc(doc));
}

/** Whether `name` is declared in `path` with a TSDoc comment, following re-exports. */
function isDocumented(path: string, name: string, depth = 0): boolean {
  if (depth > 5 || !existsSync(path)) return false;
  for (const statement of parse(path).statements) {
    if (ts.isVariableStatement(statement)) {
      const declares = statement.declarationList.declarations.some(
        (declaration) => ts.isIdentifier(declaration.name) && declaration.name.text === name,
      );
      if (declares) return hasDocComment(statement);
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement)) &&
      statement.name?.text === name
    ) {
      return hasDocComment(statement);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && statement.exportClause) {
      if (!ts.isNamedExports(statement.exportClause)) continue;
      const specifier = statement.exportClause.elements.find((element) => element.name.text === name);
      if (!specifier) continue;
      const target = moduleFile(path, (statement.moduleSpecifier as ts.StringLiteral).text);
      return isDocumented(target, specifier.propertyName?.text ?? name, depth + 1);
    }
  }
  return false;
}

/** Every export of one entry file (explicit named re-exports only: the house style has no `export *`). */
function exportsOf(entry: string, path: string): ApiExport[] {
  const found: ApiExport[] = [];
  for (const statement of parse(path).statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    const clause = statement.exportClause;
    if (!clause || !ts.isNamedExports(clause) || !statement.moduleSpecifier) {
      throw new Error(
        `${path}: only named re-exports (export { a } from "./a.ts") are allowed in an entry point`,
      );
    }
    const target = moduleFile(path, (statement.moduleSpecifier as ts.StringLiteral).text);
    for (const element of clause.elements) {
      const typeOnly = statement.isTypeOnly || element.isTypeOnly;
      const source = element.propertyName?.text ?? element.name.text;
      const documented = isDocumented(target, source);
      found.push({ entry, name: element.name.text, kind: typeOnly ? "type" : "value", documented });
    }
  }
  return found.sort((left, right) => left.name.localeCompare(right.name, "en"));
}

/** The exports of every entry point of a package. */
export function packageApi(packageName: string): ApiExport[] {
  return entryPoints(packageName).flatMap(([entry, path]) => exportsOf(entry, path));
}

export function reportPath(packageName: string): string {
  return join(repositoryRoot, "packages", packageName, "api-report.txt");
}

/** The report's text: a header saying how to update it, then `entry name kind` lines. */
export function renderReport(packageName: string, api: ApiExport[]): string {
  const header = [
    `# The public API of @codeaction/${packageName}: every export of every entry point.`,
    `# scripts/api-report.test.ts fails when the code differs. After a deliberate change run`,
    `# \`${updateCommand}\`, document the export (TSDoc and docs/api.md) and commit this file.`,
  ];
  return `${[...header, ...api.map((item) => `${item.entry} ${item.name} ${item.kind}`)].join("\n")}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const write = process.argv.includes("--write");
  for (const packageName of publishedPackages) {
    const report = renderReport(packageName, packageApi(packageName));
    if (write) writeFileSync(reportPath(packageName), report);
    else process.stdout.write(`${report}\n`);
  }
  if (write) process.stderr.write("[api-report] wrote packages/*/api-report.txt\n");
}
