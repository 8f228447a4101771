import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { takeProcessLock, withFileLock } from "./file-lock.ts";

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-process-lock-"));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** The pid of a process that ran and is gone. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" });
  return Number(child.stdout.trim());
}

describe("takeProcessLock", () => {
  it("is held once: a second taker is told the holder's pid at once; after release it can be taken again", async () => {
    const lockPath = join(folder, "run.lock");
    const first = await takeProcessLock(lockPath);
    expect("release" in first).toBe(true);
    expect(await readFile(lockPath, "utf8")).toBe(`${process.pid}\n`);
    expect(await takeProcessLock(lockPath)).toEqual({ heldBy: process.pid });
    if ("release" in first) await first.release();
    const again = await takeProcessLock(lockPath);
    expect("release" in again).toBe(true);
  });

  it("a lock held by a live process is refused; once that process is gone, the stale lock is taken over", async () => {
    const lockPath = join(folder, "run.lock");
    const holder = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    await writeFile(lockPath, `${holder.pid}\n`, { mode: 0o600 });
    expect(await takeProcessLock(lockPath)).toEqual({ heldBy: holder.pid });
    holder.kill("SIGKILL");
    await new Promise((resolve) => holder.once("exit", resolve));
    expect("release" in (await takeProcessLock(lockPath))).toBe(true);
    expect(await readFile(lockPath, "utf8")).toBe(`${process.pid}\n`);
  });

  it("of eight takers racing for a stale lock, exactly one holds it", async () => {
    const lockPath = join(folder, "run.lock");
    await writeFile(lockPath, `${deadPid()}\n`, { mode: 0o600 });
    const taken = await Promise.all(Array.from({ length: 8 }, () => takeProcessLock(lockPath)));
    expect(taken.filter((lock) => "release" in lock)).toHaveLength(1);
    expect(taken.filter((lock) => "heldBy" in lock)).toHaveLength(7);
  });

  it("a symbolic link planted as the lock is named as such with the fix, and nothing is written through it", async () => {
    const target = join(folder, "elsewhere");
    await writeFile(target, "untouched");
    for (const [name, take] of [
      ["run.lock", (path: string) => takeProcessLock(path)],
      ["journal.lock", (path: string) => withFileLock(path, async () => "worked")],
      ["dangling.lock", (path: string) => withFileLock(path, async () => "worked")],
    ] as const) {
      const lockPath = join(folder, name);
      await symlink(name === "dangling.lock" ? join(folder, "missing") : target, lockPath);
      await expect(take(lockPath)).rejects.toThrow(
        new RegExp(`the lock file .*${name} is a symbolic link.*Remove it \\(rm .*${name}\\)`),
      );
    }
    expect(await readFile(target, "utf8")).toBe("untouched");
  });
});
