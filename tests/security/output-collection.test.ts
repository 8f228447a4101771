import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SandboxSession } from "@codeaction/sandbox";
import { describe, expect, test } from "vitest";
import { runCli } from "../../packages/cli/test/run-cli.ts";
import {
  type CollectedFiles,
  collectOutputFiles,
  walkNoteName,
} from "../../packages/core/src/output/output-files.ts";
import { backends, fenced, runAgentCase, runCase, suiteManager } from "../support/harness.ts";

// Issue 29, findings 4, 5 and 6: reading back /workspace/out. One exec lists and reads the whole
// tree (caps on entries, folders, depth and time, with a note for what was left behind); names
// travel as raw bytes and files are opened without following links; every file gets a host path
// no other file or folder of the run has, compared without case.

/** The session, with every call that starts an exec counted (the seam that proves the route). */
function countingExecs(session: SandboxSession): { session: SandboxSession; execs: () => number } {
  let execs = 0;
  const counted = new Set(["spawn", "execute", "readFile", "listFiles", "writeFile"]);
  const proxy = new Proxy(session, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (counted.has(String(property))) execs += 1;
        return value.apply(target, args);
      };
    },
  });
  return { session: proxy, execs: () => execs };
}

/** Every name of the files, and every folder on their way, lower-cased: no file may be a folder too. */
function clashes(names: string[]): string[] {
  const files = names.map((name) => name.toLowerCase());
  const folders = new Set(
    files.flatMap((name) =>
      name
        .split("/")
        .slice(0, -1)
        .map((_, index, parts) => parts.slice(0, index + 1).join("/")),
    ),
  );
  const duplicates = files.filter((name, index) => files.indexOf(name) !== index);
  return [...duplicates, ...files.filter((name) => folders.has(name))];
}

const fiveMegabytes = 5 * 1024 * 1024;

const clashProgram = [
  "import os",
  'os.makedirs("/workspace/out/a_", exist_ok=True)',
  'open("/workspace/out/a?", "w").write("question")',
  'open("/workspace/out/a_/b.txt", "w").write("folder")',
  'open("/workspace/out/Report.TXT", "w").write("upper")',
  'open("/workspace/out/report.txt", "w").write("lower")',
  'print("RESULT: saved")',
].join("\n");

describe.each(backends)("output collection (backend %s)", (backend) => {
  const manager = suiteManager(backend);

  test("finding 5: a non-UTF-8 name never brings back a link's target (b'\\xff.txt' beside a link named '\\ufffd.txt')", async () => {
    const outcome = await runAgentCase({
      backend,
      programs: [
        [
          "import os",
          'os.makedirs("/workspace/out", exist_ok=True)',
          'open("/tmp/big.bin", "wb").write(b"x" * (5 * 1024 * 1024))',
          'open(b"/workspace/out/\\xff.txt", "wb").write(b"1")',
          'os.symlink("/tmp/big.bin", "/workspace/out/\\ufffd.txt")',
          'print("RESULT: saved")',
        ].join("\n"),
      ],
    });
    expect(outcome.error).toBeUndefined();
    const files = outcome.result!.files;
    const received = files.reduce((total, file) => total + file.bytes.length, 0);
    expect(received).toBeLessThan(fiveMegabytes);
    expect(
      files.map((file) => ({
        size: file.size,
        bytes: Buffer.from(file.bytes).toString(),
        from: file.renamedFrom,
      })),
    ).toEqual([{ size: 1, bytes: "1", from: "\\xff.txt" }]);
    expect(outcome.result!.refusedFiles).toEqual([
      { name: "_.txt", reason: expect.stringMatching(/it is a link/) },
    ]);
  });

  test("finding 6: a file and a folder that sanitise to one name, and names that differ only in case, all come back (library)", async () => {
    const outcome = await runAgentCase({ backend, programs: [clashProgram] });
    expect(outcome.error).toBeUndefined();
    const files = outcome.result!.files;
    const byContent = Object.fromEntries(files.map((file) => [Buffer.from(file.bytes).toString(), file]));
    expect(Object.keys(byContent).sort()).toEqual(["folder", "lower", "question", "upper"]);
    expect(clashes(files.map((file) => file.name))).toEqual([]);
    // The renamed ones say what they were called in the container.
    expect(byContent.question!.renamedFrom).toBe("a?");
    expect(byContent.lower).toMatchObject({ name: "report-2.txt", renamedFrom: "report.txt" });
    expect(byContent.upper!.renamedFrom).toBeUndefined();
  });

  test("finding 4: a tree of 45 x 45 folders is read in ONE exec, and what was left behind is reported", async () => {
    let collected: CollectedFiles | undefined;
    let execs = 0;
    await runCase(manager(), {
      program: [
        "import os",
        'os.makedirs("/workspace/out", exist_ok=True)',
        'open("/workspace/out/a-first.txt", "w").write("first")',
        "for outer in range(45):",
        "    for inner in range(45):",
        '        os.makedirs(f"/workspace/out/f{outer:02}/g{inner:02}", exist_ok=True)',
        'open("/workspace/out/z-last.txt", "w").write("last")',
        'print("RESULT: made")',
      ].join("\n"),
      after: async (session) => {
        const counting = countingExecs(session);
        collected = await collectOutputFiles(counting.session);
        execs = counting.execs();
      },
    });
    expect(execs).toBe(1);
    expect(collected!.files.map((file) => file.name)).toEqual(["a-first.txt"]);
    expect(collected!.refused).toEqual([
      {
        name: walkNoteName,
        // The folder cap, or on a machine too loaded to open 1,000 folders in 3 s, the time budget.
        reason: expect.stringMatching(
          /the walk stopped at (the cap of 1000 folders|its time budget of 3 s) .*left behind/,
        ),
      },
    ]);
  }, 300_000);
});

describe("output collection through the CLI", () => {
  test("finding 6: `codeaction ask` saves `a?` and `a_/b.txt` side by side and says which file was renamed (runc: the CLI has no backend option)", async () => {
    const folder = mkdtempSync(join(tmpdir(), "codeaction-security-"));
    try {
      const replay = join(folder, "replay.json");
      writeFileSync(replay, JSON.stringify({ replies: [fenced(clashProgram)] }));
      const run = await runCli(
        ["ask", "--no-journal", "--out", "results", "--replay", replay, "Save the files."],
        {
          cwd: folder,
        },
      );
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stdout).toBe("saved\n");
      const saved = [...run.stderr.matchAll(/^file: (.+) \(\d+ bytes/gm)].map((match) => match[1]!);
      expect(saved).toHaveLength(4);
      const contents = saved.map((path) => readFileSync(path, "utf8")).sort();
      expect(contents).toEqual(["folder", "lower", "question", "upper"]);
      expect(run.stderr).toMatch(/renamed from \/workspace\/out\/a\?\)/);
      expect(run.stderr).toMatch(/renamed from \/workspace\/out\/report\.txt\)/);
      for (const path of saved) expect(existsSync(path)).toBe(true);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 120_000);
});
