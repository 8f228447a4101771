import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { withFileLock } from "./file-lock.ts";

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-file-lock-"));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("withFileLock", () => {
  it("a symbolic link planted as the lock is named as such with the fix, and nothing is written through it", async () => {
    const target = join(folder, "elsewhere");
    await writeFile(target, "untouched");
    for (const name of ["journal.lock", "dangling.lock"]) {
      const lockPath = join(folder, name);
      await symlink(name === "dangling.lock" ? join(folder, "missing") : target, lockPath);
      await expect(withFileLock(lockPath, async () => "worked")).rejects.toThrow(
        new RegExp(`the lock file .*${name} is a symbolic link.*Remove it \\(rm .*${name}\\)`),
      );
    }
    expect(await readFile(target, "utf8")).toBe("untouched");
  });
});
