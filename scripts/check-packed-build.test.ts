import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { packProblem } from "./check-packed-build.ts";

let folder = "";
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** A package folder: a manifest like ours, src/index.ts, and the given built files. */
function packageWith(built: string[]): string {
  folder = mkdtempSync(join(tmpdir(), "codeaction-prepack-"));
  writeFileSync(
    join(folder, "package.json"),
    JSON.stringify({
      name: "@codeaction/example",
      publishConfig: {
        exports: {
          ".": { types: "./dist/index.d.ts", import: "./dist/index.js" },
          "./package.json": "./package.json",
        },
        bin: { example: "./dist/bin.js" },
      },
    }),
  );
  mkdirSync(join(folder, "src"));
  writeFileSync(join(folder, "src", "index.ts"), "export {};\n");
  utimesSync(join(folder, "src", "index.ts"), new Date(1_000_000), new Date(1_000_000));
  mkdirSync(join(folder, "dist"));
  for (const name of built) writeFileSync(join(folder, "dist", name), "");
  return folder;
}

describe("prepack: a package is packed only with its build in place", () => {
  test("without dist: refused, naming the missing files and the fix", () => {
    expect(packProblem(packageWith([]))).toBe(
      "@codeaction/example is not built: ./dist/index.d.ts, ./dist/index.js, ./dist/bin.js missing. Run `pnpm build` at the repository's root, then pack again.",
    );
    expect(packProblem(packageWith(["index.js", "index.d.ts"]))).toContain("./dist/bin.js missing");
  });

  test("built after its sources: packed; a source edited since: refused", () => {
    const built = packageWith(["index.js", "index.d.ts", "bin.js"]);
    expect(packProblem(built)).toBeUndefined();
    writeFileSync(join(built, "src", "index.ts"), "export const changed = 1;\n");
    utimesSync(join(built, "src", "index.ts"), new Date(), new Date(Date.now() + 60_000));
    expect(packProblem(built)).toBe(
      "@codeaction/example's build is older than src/index.ts: run `pnpm build` at the repository's root, then pack again.",
    );
  });
});
