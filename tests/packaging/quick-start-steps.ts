import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { repositoryRoot } from "./pack-packages.ts";

/** One step of docs/quick-start.md's npm section: a command line, or a file to write. */
export type QuickStartStep =
  | { kind: "command"; line: string; expectedOutput?: string }
  | { kind: "file"; name: string; content: string };

/**
 * The steps of docs/quick-start.md's "With the npm packages" section, in order, as written: every
 * line of its `sh` blocks, each file block marked `<!-- quick-start file: NAME -->`, and the
 * output block after a command block as the expected output of that block's last command.
 */
export async function quickStartSteps(): Promise<QuickStartStep[]> {
  const text = await readFile(join(repositoryRoot, "docs/quick-start.md"), "utf8");
  const section = text.split("## With the npm packages")[1]?.split("\n## ")[0];
  if (!section) throw new Error('docs/quick-start.md has no "## With the npm packages" section');
  const steps: QuickStartStep[] = [];
  const blocks = /(?:<!-- quick-start file: (\S+) -->\n)?^(`{3,})(\w*)\n([\s\S]*?)^\2$/gm;
  for (const [, fileName, , language, content] of section.matchAll(blocks)) {
    if (fileName) steps.push({ kind: "file", name: fileName, content: content! });
    else if (language === "sh") {
      for (const line of content!.split("\n")) {
        const command = line.replace(/\s+#.*$/, "").trim();
        if (command !== "") steps.push({ kind: "command", line: command });
      }
    } else if (language === "") {
      const last = steps.at(-1);
      if (last?.kind === "command") last.expectedOutput = content!.trim();
    }
  }
  return steps;
}

/** The README's "Use it" block (marked `<!-- readme: ... -->`), as written. */
export async function readmeSnippet(): Promise<string> {
  const text = await readFile(join(repositoryRoot, "README.md"), "utf8");
  const block = /<!-- readme:[^>]*-->\n```ts\n([\s\S]*?)^```$/m.exec(text)?.[1];
  if (!block) throw new Error("README.md has no block marked <!-- readme: ... -->");
  return block;
}
