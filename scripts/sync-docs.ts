// Docs take their code from tested example files. A fenced block right after a marker
//   <!-- example: examples/code-agent.ts -->
// in docs/*.md is replaced by that file's current content (a block is added when none follows).
// Usage: node scripts/sync-docs.ts            rewrite the blocks that differ
//        node scripts/sync-docs.ts --check    list them and exit 1, writing nothing
//        --docs DIR                           another docs folder (marker paths stay relative to the repository)
import { readdir, readFile, writeFile } from "node:fs/promises";
import { extname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const repositoryRoot = fileURLToPath(new URL("../", import.meta.url));
const marker = /^<!-- example: (\S+) -->$/;
const languages: Record<string, string> = { ".ts": "ts", ".py": "python", ".json": "json", ".sh": "sh" };

type Stale = { doc: string; example: string };

/** A fenced block holding `content`, with a fence longer than any backtick run inside it. */
function fence(path: string, content: string): string[] {
  const longestRun = Math.max(0, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  const ticks = "`".repeat(Math.max(3, longestRun + 1));
  return [`${ticks}${languages[extname(path)] ?? ""}`, ...content.replace(/\n$/, "").split("\n"), ticks];
}

/** The document with every marked block made equal to its file, and which blocks differed. */
async function syncDocument(text: string): Promise<{ text: string; stale: string[] }> {
  const lines = text.split("\n");
  const output: string[] = [];
  const stale: string[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] ?? "";
    output.push(line);
    const example = marker.exec(line.trim())?.[1];
    if (!example) continue;
    const content = await readFile(join(repositoryRoot, example), "utf8").catch(() => {
      throw new Error(
        `a marker names ${example}, which does not exist (paths are relative to the repository root)`,
      );
    });
    const wanted = fence(example, content);
    const opening = /^(`{3,})/.exec(lines[index + 1] ?? "")?.[1];
    let current: string[] = [];
    if (opening) {
      const closing = lines.findIndex((candidate, at) => at > index + 1 && candidate.trim() === opening);
      if (closing === -1) throw new Error(`the block after the marker for ${example} is never closed`);
      current = lines.slice(index + 1, closing + 1);
      index = closing;
    }
    if (current.join("\n") !== wanted.join("\n")) stale.push(example);
    output.push(...wanted);
  }
  return { text: output.join("\n"), stale };
}

async function main(argv: string[]): Promise<number> {
  const check = argv.includes("--check");
  const docsAt = argv.indexOf("--docs");
  const docs = docsAt === -1 ? join(repositoryRoot, "docs") : argv[docsAt + 1];
  if (!docs) throw new Error("--docs needs a folder");
  const stale: Stale[] = [];
  for (const name of (await readdir(docs)).filter((file) => file.endsWith(".md")).sort()) {
    const path = join(docs, name);
    const original = await readFile(path, "utf8");
    const synced = await syncDocument(original);
    const doc = relative(process.cwd(), path);
    stale.push(...synced.stale.map((example) => ({ doc, example })));
    if (!check && synced.text !== original) {
      await writeFile(path, synced.text);
      console.log(`updated ${doc}: ${synced.stale.join(", ")}`);
    }
  }
  if (check && stale.length > 0) {
    for (const { doc, example } of stale)
      console.error(`${doc}: the block for ${example} differs from the file`);
    console.error("Run `node scripts/sync-docs.ts` to copy the examples into the docs.");
    return 1;
  }
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  console.error(`sync-docs: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
