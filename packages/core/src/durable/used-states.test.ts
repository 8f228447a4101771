import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, stat, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFileUsedStates, processUsedStates } from "./used-states.ts";

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

describe("used states", () => {
  it("in this process: a nonce is marked once", async () => {
    const nonce = randomBytes(16).toString("hex");
    expect(await processUsedStates.markUsed(nonce)).toBe(true);
    expect(await processUsedStates.markUsed(nonce)).toBe(false);
  });

  it("in files: of eight markers of one nonce, one wins; files 0600 in a 0700 folder; a planted link counts as used and is not followed", async () => {
    const parent = await mkdtemp(join(tmpdir(), "codeaction-used-"));
    folders.push(parent);
    const directory = join(parent, "used");
    const used = createFileUsedStates(directory);
    const nonce = randomBytes(16).toString("hex");
    const marks = await Promise.all(Array.from({ length: 8 }, () => used.markUsed(nonce)));
    expect(marks.filter(Boolean)).toHaveLength(1);
    expect((await stat(directory)).mode & 0o777).toBe(0o700);
    expect((await stat(join(directory, nonce))).mode & 0o777).toBe(0o600);
    const planted = randomBytes(16).toString("hex");
    await symlink(join(parent, "elsewhere"), join(directory, planted));
    expect(await used.markUsed(planted)).toBe(false);
    expect((await readdir(parent)).sort()).toEqual(["used"]);
  });
});
