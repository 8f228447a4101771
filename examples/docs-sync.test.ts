import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { repositoryRoot } from "./run-example.ts";

const run = promisify(execFile);
const docsFolder = join(repositoryRoot, "docs");

/** Runs scripts/sync-docs.ts and resolves with its exit code and output (a failing exit is not thrown). */
async function syncDocs(args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, ["scripts/sync-docs.ts", ...args], {
      cwd: repositoryRoot,
    });
    return { exitCode: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { exitCode: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

describe("docs take their code from the example files", () => {
  it("every marked block in docs/*.md equals its example file (run `node scripts/sync-docs.ts` to fix)", async () => {
    const check = await syncDocs(["--check"]);
    expect(check.stderr).toBe("");
    expect(check.exitCode).toBe(0);
  });

  it("docs/examples.md marks every example file", async () => {
    const page = await readFile(join(docsFolder, "examples.md"), "utf8");
    const marked = [...page.matchAll(/^<!-- example: examples\/([a-z-]+\.ts) -->$/gm)].map(
      (match) => match[1],
    );
    const examples = (await readdir(new URL(".", import.meta.url))).filter(
      (name) => name.endsWith(".ts") && !name.endsWith(".test.ts") && name !== "run-example.ts",
    );
    expect(marked.sort()).toEqual(examples.sort());
  });

  describe("the sync script", () => {
    const folders: string[] = [];
    afterAll(async () => {
      await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
    });

    it("reports a stale block, rewrites it to the file's content, then reports nothing", async () => {
      const folder = await mkdtemp(join(tmpdir(), "docs-sync-"));
      folders.push(folder);
      const page = join(folder, "page.md");
      const stale = [
        "# Page",
        "",
        "<!-- example: examples/config-validation.ts -->",
        "```ts",
        "retyped();",
        "```",
        "after",
        "",
      ];
      await writeFile(page, stale.join("\n"));

      const check = await syncDocs(["--check", "--docs", folder]);
      expect(check.exitCode).toBe(1);
      expect(check.stderr).toContain("the block for examples/config-validation.ts differs from the file");
      expect(await readFile(page, "utf8")).toBe(stale.join("\n"));

      expect((await syncDocs(["--docs", folder])).exitCode).toBe(0);
      const example = await readFile(join(repositoryRoot, "examples/config-validation.ts"), "utf8");
      expect(await readFile(page, "utf8")).toBe(
        [
          "# Page",
          "",
          "<!-- example: examples/config-validation.ts -->",
          "```ts",
          example.trimEnd(),
          "```",
          "after",
          "",
        ].join("\n"),
      );
      expect((await syncDocs(["--check", "--docs", folder])).exitCode).toBe(0);
    });

    it("adds a block under a marker that has none, and fails on a marker naming no file", async () => {
      const folder = await mkdtemp(join(tmpdir(), "docs-sync-"));
      folders.push(folder);
      await writeFile(join(folder, "new.md"), "<!-- example: examples/limits.ts -->\ntext\n");
      expect((await syncDocs(["--check", "--docs", folder])).exitCode).toBe(1);
      await syncDocs(["--docs", folder]);
      const written = await readFile(join(folder, "new.md"), "utf8");
      expect(
        written.startsWith("<!-- example: examples/limits.ts -->\n```ts\n// The seed's limits test"),
      ).toBe(true);
      expect(written.endsWith("\n```\ntext\n")).toBe(true);

      await writeFile(join(folder, "wrong.md"), "<!-- example: examples/no-such-example.ts -->\n");
      const missing = await syncDocs(["--check", "--docs", folder]);
      expect(missing.exitCode).toBe(1);
      expect(missing.stderr).toContain("examples/no-such-example.ts, which does not exist");
    });
  });
});
