import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { coreAssets } from "../core-assets.ts";
import { relayModules, relaySource, withoutRelayImports } from "./python-sources.ts";

const bridgeFolder = dirname(coreAssets.path("relay.py"));

describe("the relay's modules", () => {
  it("each imports on its own, in a plain interpreter, and importing starts nothing", () => {
    const names = relayModules.map((name) => name.replace(/\.py$/, ""));
    const check = [
      "import os, sys",
      `sys.path.insert(0, ${JSON.stringify(bridgeFolder)})`,
      ...names.map((name) => `import ${name}`),
      // No child was forked: the interpreter's start runs only as the relay's main program.
      "children = open(f'/proc/{os.getpid()}/task/{os.getpid()}/children').read().split()",
      "print('imported', len(children), relay.WAITING_INTERPRETER)",
    ].join("\n");
    const output = execFileSync("python3", ["-I", "-c", check], { encoding: "utf8" });
    expect(output.trim()).toBe("imported 0 None");
  });

  it("join into one source without their imports of one another, in order", () => {
    const source = relaySource();
    expect(source).not.toMatch(/^from relay\w* import /m);
    const starts = relayModules.map((name) =>
      source.indexOf(readFileSync(coreAssets.path(name), "utf8").split("\n").slice(-30).join("\n")),
    );
    expect(starts.every((start) => start > 0)).toBe(true);
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    // The one source compiles.
    execFileSync("python3", ["-I", "-c", "import sys; compile(sys.stdin.read(), 'relay', 'exec')"], {
      input: source,
    });
  });

  it("refuses an import of another relay module in parentheses, which the join could not drop", () => {
    expect(() => withoutRelayImports("relay_io.py", "from relay import (\n    CHUNK_BYTES,\n)\n")).toThrow(
      /one line per import/,
    );
  });
});
