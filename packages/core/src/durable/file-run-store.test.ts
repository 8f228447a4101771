import { mkdtemp, readdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFileRunStore } from "./file-run-store.ts";
import type { RunState } from "./run-state.ts";

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function newStore() {
  const parent = await mkdtemp(join(tmpdir(), "codeaction-store-"));
  folders.push(parent);
  const directory = join(parent, "runs");
  return { store: createFileRunStore(directory), directory };
}

const state = (runId: string) =>
  ({ format: "codeaction.run-state", version: 1, runId, signature: "ab" }) as unknown as RunState;

describe("the file run store", () => {
  it("keeps a state per run in a 0700 folder as 0600 files, and hands each out once", async () => {
    const { store, directory } = await newStore();
    await store.save(state("run_a"));
    await store.save(state("run_b"));
    expect((await stat(directory)).mode & 0o777).toBe(0o700);
    expect((await stat(join(directory, "run_a.json"))).mode & 0o777).toBe(0o600);
    expect(await store.list()).toEqual(["run_a", "run_b"]);
    expect(await store.load("run_a")).toEqual(state("run_a"));
    const [first, second] = await Promise.all([store.take("run_a"), store.take("run_a")]);
    expect([first, second].filter(Boolean)).toEqual([state("run_a")]);
    expect(await store.load("run_a")).toBeUndefined();
    expect(await readdir(directory)).toEqual(["run_b.json"]);
  });

  it("refuses run ids that could leave the folder, and never reads through a link", async () => {
    const { store, directory } = await newStore();
    await expect(store.load("../etc/passwd")).rejects.toThrow(/is not one the agent makes/);
    await store.save(state("run_c"));
    const outside = join(directory, "..", "outside.json");
    await writeFile(outside, JSON.stringify(state("run_d")));
    await symlink(outside, join(directory, "run_d.json"));
    await expect(store.load("run_d")).rejects.toThrow(/ELOOP|symbolic link/);
  });
});
