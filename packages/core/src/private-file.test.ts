import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "./errors/config-error.ts";
import { privateFolder, writePrivateFile } from "./private-file.ts";

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "private-file-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const hint = "choose another path";

describe("privateFolder and writePrivateFile", () => {
  it("make a 0700 folder (and set an open one back) holding a 0600 file; an older 0644 file is made 0600", async () => {
    const records = join(folder, "open", "records");
    await mkdir(join(folder, "open"), { mode: 0o755 });
    await privateFolder(records, hint);
    expect((await lstat(records)).mode & 0o777).toBe(0o700);
    const opened = join(folder, "open");
    await privateFolder(opened, hint);
    expect((await lstat(opened)).mode & 0o777).toBe(0o700);

    const path = join(records, "state.json");
    await writePrivateFile(path, "first", { hint });
    expect((await lstat(path)).mode & 0o777).toBe(0o600);
    await writeFile(join(records, "old.json"), "older", { mode: 0o644 });
    await writePrivateFile(join(records, "old.json"), "newer", { hint });
    expect((await lstat(join(records, "old.json"))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(records, "old.json"), "utf8")).toBe("newer");
  });

  it("refuse a link in the file's or the folder's place with the caller's fix, and write nothing through it", async () => {
    const target = join(folder, "elsewhere.txt");
    await writeFile(target, "untouched");
    const linked = join(folder, "linked.json");
    await symlink(target, linked);
    const error = await writePrivateFile(linked, "secret", { hint }).catch((thrown: unknown) => thrown);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      `${linked} is a symbolic link, and codeaction does not write through links; choose another path`,
    );
    expect(await readFile(target, "utf8")).toBe("untouched");

    await mkdir(join(folder, "real"));
    await symlink(join(folder, "real"), join(folder, "folder-link"));
    await expect(privateFolder(join(folder, "folder-link"), hint)).rejects.toThrow(
      /folder-link is not a folder of this user .*; choose another path$/,
    );
  });

  it("exclusive refuses a file already there (a fresh temporary name)", async () => {
    const path = join(folder, "taken.tmp");
    await writePrivateFile(path, "one", { hint, exclusive: true, sync: true });
    await expect(writePrivateFile(path, "two", { hint, exclusive: true })).rejects.toThrow(/\(EEXIST\)/);
    expect(await readFile(path, "utf8")).toBe("one");
  });
});
