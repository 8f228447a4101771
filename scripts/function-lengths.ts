// The longest functions of each package's non-test sources (declarations, methods, accessors,
// constructors and function expressions or arrows, each counted from its first to its last line;
// Python functions and classes too, read with python3's ast), for the "no function over about 60
// lines" rule of issue 19.
// Usage: node scripts/function-lengths.ts [package...] [--top N]   (default: every package, top 5)
//        node scripts/function-lengths.ts --check   (scripts/test.sh: fails for a function over
//        maxFunctionLines not on the allow-list below, and for an allow-list entry no longer over)
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
// TypeScript 7 (the compiler the repository builds with) has no JavaScript parser API; TypeScript
// 5.9's parser, installed as `typescript5`, reads the sources here (docs/api.md, "Versions").
import ts from "typescript5";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export type FunctionLength = { file: string; name: string; lines: number };

function sourceFiles(folder: string, extension: ".ts" | ".py"): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sourceFiles(path, extension);
    return name.endsWith(extension) && !name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Every function and class of Python files, by python3's own parser (none when python3 is missing). */
const pythonLister = `
import ast, json, sys
found = []
for path in sys.argv[1:]:
    tree = ast.parse(open(path, encoding="utf-8").read())
    def visit(node, owner):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = owner + child.name
                kind = "class " if isinstance(child, ast.ClassDef) else ""
                found.append({"file": path, "name": kind + name, "lines": child.end_lineno - child.lineno + 1})
                visit(child, name + ".")
            else:
                visit(child, owner)
    visit(tree, "")
print(json.dumps(found))
`;

export function pythonFunctionLengths(paths: string[]): FunctionLength[] {
  if (paths.length === 0) return [];
  try {
    const output = execFileSync("python3", ["-c", pythonLister, ...paths], { encoding: "utf8" });
    return (JSON.parse(output) as FunctionLength[]).map((item) => ({
      ...item,
      file: relative(root, item.file),
    }));
  } catch {
    return [];
  }
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

export const maxFunctionLines = 60;

/**
 * Functions over the limit today ("file name"), each waiting for its split; nothing is added here.
 * Classes (Python's included) are not functions: only their methods count.
 */
export const allowedLongFunctions: Record<string, string> = {};

/** Functions over the limit not on the list, and list entries no longer over it. */
export function functionLengthProblems(lengths: FunctionLength[], allowed: Record<string, string>): string[] {
  const functions = lengths.filter((item) => !item.name.startsWith("class "));
  const problems = functions
    .filter((item) => item.lines > maxFunctionLines && !(`${item.file} ${item.name}` in allowed))
    .map((item) => `${item.file}: ${item.name} is ${item.lines} lines, over ${maxFunctionLines}: split it`);
  for (const [key, reason] of Object.entries(allowed)) {
    const found = functions.find((item) => `${item.file} ${item.name}` === key);
    if (!found || found.lines <= maxFunctionLines) {
      problems.push(
        `${key} (${reason}) is not over ${maxFunctionLines} lines now: take it off the allow-list in scripts/function-lengths.ts`,
      );
    }
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes("--check")) {
  const lengths = readdirSync(join(root, "packages")).flatMap((name) => {
    const source = join(root, "packages", name, "src");
    return [
      ...sourceFiles(source, ".ts").flatMap(functionLengths),
      ...pythonFunctionLengths(sourceFiles(source, ".py")),
    ];
  });
  const problems = functionLengthProblems(lengths, allowedLongFunctions);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) process.exitCode = 1;
  else
    console.log(
      `${lengths.length} functions within ${maxFunctionLines} lines (${Object.keys(allowedLongFunctions).length} allowed, each with its issue)`,
    );
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const topIndex = process.argv.indexOf("--top");
  const top = topIndex > 0 ? Number(process.argv[topIndex + 1]) : 5;
  const named = process.argv
    .slice(2)
    .filter((argument, index, all) => !argument.startsWith("--") && all[index - 1] !== "--top");
  const packages = named.length > 0 ? named : readdirSync(join(root, "packages"));
  for (const name of packages) {
    const source = join(root, "packages", name, "src");
    const lengths = sourceFiles(source, ".ts").flatMap(functionLengths);
    const python = pythonFunctionLengths(sourceFiles(source, ".py"));
    for (const [label, items] of [
      [name, lengths],
      [`${name} (Python)`, python],
    ] as const) {
      if (items.length === 0) continue;
      const sorted = [...items].sort((left, right) => right.lines - left.lines);
      process.stdout.write(`${label}:\n`);
      for (const item of sorted.slice(0, top))
        process.stdout.write(`  ${item.lines}\t${item.name}\t${item.file}\n`);
    }
  }
}
