// The longest functions of each package's non-test sources (declarations, methods, accessors,
// constructors and function expressions or arrows, each counted from its first to its last line),
// for the "no function over about 60 lines" rule of issue 19.
// Usage: node scripts/function-lengths.ts [package...] [--top N]   (default: every package, top 5)
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export type FunctionLength = { file: string; name: string; lines: number };

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sourceFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : [];
  });
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = node as { name?: ts.Node };
  if (named.name) return named.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  return "(anonymous)";
}

/** Every function-like node of one file with its length in lines, qualified by its class. */
export function functionLengths(path: string): FunctionLength[] {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as { body?: ts.Node }).body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const owner = ts.isClassLike(node.parent) && node.parent.name ? `${node.parent.name.text}.` : "";
      found.push({ file: relative(root, path), name: owner + nameOf(node, source), lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const topIndex = process.argv.indexOf("--top");
  const top = topIndex > 0 ? Number(process.argv[topIndex + 1]) : 5;
  const named = process.argv
    .slice(2)
    .filter((argument, index, all) => !argument.startsWith("--") && all[index - 1] !== "--top");
  const packages = named.length > 0 ? named : readdirSync(join(root, "packages"));
  for (const name of packages) {
    const lengths = sourceFiles(join(root, "packages", name, "src")).flatMap(functionLengths);
    lengths.sort((left, right) => right.lines - left.lines);
    process.stdout.write(`${name}:\n`);
    for (const item of lengths.slice(0, top))
      process.stdout.write(`  ${item.lines}\t${item.name}\t${item.file}\n`);
  }
}
