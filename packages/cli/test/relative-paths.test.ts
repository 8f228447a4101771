import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repositoryRoot } from "./run-cli.ts";
import { runMain } from "./run-main.ts";

// A relative path on the command line is read from the command's folder (CliContext.cwd: main()'s
// context), not from the process's: an embedding program or a test runs main() for another folder.
// Here the command's folder is a temp folder and the process's is the repository root, where none
// of these files are.

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-relative-"));
  expect(folder).not.toBe(process.cwd());
  await copyFile(join(repositoryRoot, "examples/data/orders.csv"), join(folder, "orders.csv"));
  await copyFile(join(repositoryRoot, "examples/data/orders.csv"), join(folder, "sales.csv"));
  await writeFile(
    join(folder, "replay.json"),
    JSON.stringify({
      replies: [
        { content: "", toolCalls: [{ name: "load_orders", args: { limit: 1 } }] },
        "The first order is O-0001.",
      ],
    }),
  );
  await writeFile(join(folder, "program.py"), 'print("RESULT: 1")\n');
  await writeFile(join(folder, "token.txt"), "a-token-of-at-least-enough-characters-0123456789\n", {
    mode: 0o600,
  });
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("relative paths are read from the command's folder", () => {
  it("tools: --csv, --file and a --server command line", async () => {
    const catalogue = relative(
      folder,
      join(repositoryRoot, "packages/cli/test/fixtures/catalogue-server.ts"),
    );
    const run = await runMain(
      ["tools", "--csv", "orders.csv", "--file", "sales.csv", "--server", `node ${catalogue} 3`],
      { cwd: folder },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain("def load_orders(");
    expect(run.stdout).toContain("def load_sales(");
    expect(run.stdout).toContain("def billing_get_invoice(");
  });

  it("ask: --csv and --replay", async () => {
    const run = await runMain(
      [
        "ask",
        "--pattern",
        "tools",
        "--csv",
        "orders.csv",
        "--replay",
        "replay.json",
        "--no-journal",
        "Which is the first order?",
      ],
      { cwd: folder },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toBe("The first order is O-0001.\n");
  });

  it("run: the program file (read before the data files, so a missing CSV's error shows it was read)", async () => {
    const run = await runMain(["run", "program.py", "--csv", "missing.csv"], { cwd: folder });
    expect(run.exitCode).not.toBe(0);
    expect(run.stderr).not.toContain("Cannot read the program");
    expect(run.stderr).toContain(join(folder, "missing.csv"));
  });

  it("mcp: --token-file (read before the data files, so a missing CSV's error shows it was read)", async () => {
    const run = await runMain(["mcp", "--http", "0", "--token-file", "token.txt", "--csv", "missing.csv"], {
      cwd: folder,
    });
    expect(run.exitCode).not.toBe(0);
    expect(run.stderr).not.toContain("--token-file");
    expect(run.stderr).toContain(join(folder, "missing.csv"));
  });
});
