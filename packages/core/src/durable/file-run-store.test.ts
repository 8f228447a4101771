import { mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFileRunStore, type FileRunStoreOptions } from "./file-run-store.ts";
import type { RunState } from "./run-state.ts";
import { storeLogName, verifyFileRunStore } from "./run-store-log.ts";

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function newStore(options: FileRunStoreOptions = {}) {
  const parent = await mkdtemp(join(tmpdir(), "codeaction-store-"));
  folders.push(parent);
  const directory = join(parent, "runs");
  return { store: createFileRunStore(directory, options), directory };
}

const state = (runId: string) =>
  ({
    format: "codeaction.run-state",
    version: 1,
    runId,
    nonce: `nonce-${runId}`,
    signature: "ab",
  }) as unknown as RunState;

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
    expect(
      (await readdir(directory)).filter((name) => !name.startsWith("store-log") && name !== "used"),
    ).toEqual(["run_b.json"]);
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

describe("the file run store's log", () => {
  /** A store where run_a, run_b and run_c were saved and run_a taken: four chained records. */
  async function usedStore(options: FileRunStoreOptions = {}) {
    const made = await newStore(options);
    for (const runId of ["run_a", "run_b", "run_c"]) await made.store.save(state(runId));
    await made.store.take("run_a");
    const logPath = join(made.directory, storeLogName);
    const lines = (await readFile(logPath, "utf8")).trimEnd().split("\n");
    return { ...made, logPath, lines };
  }

  it("chains every save and take, 0600, and verifies an untouched store", async () => {
    const { directory, logPath, lines } = await usedStore();
    expect(lines.map((line) => JSON.parse(line).op)).toEqual(["save", "save", "save", "take"]);
    expect((await stat(logPath)).mode & 0o777).toBe(0o600);
    const verified = await verifyFileRunStore(directory);
    expect(verified).toMatchObject({ ok: true, records: 4, states: [], last: { seq: 4 } });
  });

  it("names the record that was changed, removed, or swapped with another", async () => {
    const { directory, logPath, lines } = await usedStore();
    const rewrite = (changed: string[]) => writeFile(logPath, `${changed.join("\n")}\n`);

    await rewrite([lines[0]!, lines[1]!.replace("run_b", "run_x"), lines[2]!, lines[3]!]);
    expect((await verifyFileRunStore(directory)).broken).toMatchObject({
      kind: "changed",
      seq: 2,
      message: expect.stringContaining("record 2 (run run_x)"),
    });

    await rewrite([lines[0]!, lines[2]!, lines[3]!]);
    expect((await verifyFileRunStore(directory)).broken).toMatchObject({
      kind: "removed",
      message: expect.stringContaining("record 2 was removed"),
    });

    await rewrite([lines[0]!, lines[2]!, lines[1]!, lines[3]!]);
    const swapped = await verifyFileRunStore(directory);
    expect(swapped.ok).toBe(false);
    expect(swapped.broken).toMatchObject({
      kind: "reordered",
      message: expect.stringContaining("holds record 3 where record 2 belongs"),
    });

    await rewrite(lines);
    expect((await verifyFileRunStore(directory)).ok).toBe(true);
  });

  it("names a state file changed, removed or planted outside the store", async () => {
    const { directory } = await usedStore();
    await writeFile(join(directory, "run_b.json"), JSON.stringify(state("run_b")).replace("ab", "cd"));
    await rm(join(directory, "run_c.json"));
    await writeFile(join(directory, "run_a.json"), JSON.stringify(state("run_a")));
    const verified = await verifyFileRunStore(directory);
    expect(verified.ok).toBe(false);
    expect(verified.states).toEqual([
      { runId: "run_a", problem: expect.stringContaining("back after it was taken") },
      { runId: "run_b", problem: expect.stringContaining("changed after it was saved") },
      { runId: "run_c", problem: expect.stringContaining("removed without being taken") },
    ]);
  });

  it("with a key, the records carry an HMAC: checked with it, refused without it or with another", async () => {
    const key = "a-store-key-of-32-characters-...";
    const { directory, lines } = await usedStore({ key });
    expect(JSON.parse(lines[0]!).chain.alg).toBe("hmac-sha256");
    expect((await verifyFileRunStore(directory, { key })).ok).toBe(true);
    expect((await verifyFileRunStore(directory)).broken).toMatchObject({ kind: "key-needed", seq: 1 });
    expect((await verifyFileRunStore(directory, { key: `${key}!` })).broken).toMatchObject({
      kind: "changed",
      seq: 1,
    });
    expect(() => createFileRunStore(directory, { key: "short" })).toThrow(/at least 16 bytes/);
  });

  it("rotates the log past its size and still verifies across the two files", async () => {
    const { store, directory } = await newStore({ maxLogBytes: 1200 });
    for (let index = 0; index < 8; index += 1) await store.save(state(`run_${index}`));
    expect(await readdir(directory)).toContain("store-log.1.jsonl");
    const verified = await verifyFileRunStore(directory);
    expect(verified.broken).toBeUndefined();
    expect(verified.ok).toBe(true);
  });

  it("hands a state out once even when its file is put back after the take (its nonce is recorded as used)", async () => {
    const { store, directory } = await newStore();
    await store.save(state("run_e"));
    const copy = await readFile(join(directory, "run_e.json"), "utf8");
    expect(await store.take("run_e")).toEqual(state("run_e"));
    await writeFile(join(directory, "run_e.json"), copy, { mode: 0o600 });
    await expect(store.take("run_e")).rejects.toMatchObject({ reason: "consumed" });
    await expect(store.take("run_e")).resolves.toBeUndefined();
  });
});
