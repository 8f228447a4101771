import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { type CheckedMount, checkMountable, findMountMismatches, releaseMounts } from "./mount-files.ts";
import { filesToPlace } from "./placement-path.ts";

// The check before a data file is bind-mounted, and the comparison of what the container sees with
// what was checked (the mounts themselves: tests/security/mounted-data-files.test.ts).

const folder = mkdtempSync(join(tmpdir(), "codeaction-mount-check-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function file(name: string, content = "a,b\n1,2\n", mode = 0o644): string {
  const path = join(folder, name);
  writeFileSync(path, content);
  chmodSync(path, mode);
  return path;
}

async function check(path: string) {
  const [entry] = filesToPlace([path]);
  return checkMountable(entry!);
}

describe("checkMountable", () => {
  test("a readable regular file is checked: its real path, size and identity, its descriptor held", async () => {
    const path = file("plain.csv");
    const checked = (await check(path)) as CheckedMount;
    expect(checked.source).toBe(path);
    expect(checked.containerPath).toBe("/workspace/data/plain.csv");
    expect(checked.bytes).toBe(8);
    const info = await stat(path, { bigint: true });
    expect(checked.identity).toEqual({
      dev: info.dev,
      ino: info.ino,
      size: info.size,
      mtimeNs: info.mtimeNs,
      ctimeNs: info.ctimeNs,
    });
    await releaseMounts([checked]);
  });

  test("refused (so copied): a link, a folder, a missing file, a file others may not read", async () => {
    symlinkSync(file("target.csv"), join(folder, "link.csv"));
    mkdirSync(join(folder, "folder.csv"));
    const refusals = await Promise.all(
      [
        join(folder, "link.csv"),
        join(folder, "folder.csv"),
        join(folder, "missing.csv"),
        file("private.csv", "x", 0o600),
      ].map(check),
    );
    expect(refusals.map((entry) => ("reason" in entry ? entry.reason : "mounted"))).toEqual([
      "it is a link",
      "it is not a regular file",
      "ENOENT",
      "others may not read it (the sandbox's user could not)",
    ]);
  });
});

describe("findMountMismatches", () => {
  const identity = {
    dev: 65024n,
    ino: 42n,
    size: 8n,
    mtimeNs: 1796292583465065506n,
    ctimeNs: 1796292583465065507n,
  };
  const mount = {
    hostPath: "/h/a.csv",
    containerPath: "/workspace/data/a.csv",
    source: "/h/a.csv",
    bytes: 8,
    identity,
  } as CheckedMount;
  const line = (fields: string[]) => `${fields.join("\t")}\n`;

  test("the same file: nothing; the listing's times are find's ten-digit fractions", () => {
    const listing = line([
      "f",
      "65024",
      "42",
      "8",
      "1796292583.4650655060",
      "1796292583.4650655070",
      "a.csv",
    ]);
    expect(findMountMismatches(listing, [mount], { compareInode: true })).toEqual([]);
  });

  test("another size, time, inode, type or no entry at all is a mismatch; gVisor's own inodes are not compared", () => {
    const cases = [
      ["f", "65024", "42", "9", "1796292583.4650655060", "1796292583.4650655070", "a.csv"],
      ["f", "65024", "42", "8", "1796292583.4650655160", "1796292583.4650655070", "a.csv"],
      ["f", "65024", "42", "8", "1796292583.4650655060", "1796292584.4650655070", "a.csv"],
      ["f", "65024", "43", "8", "1796292583.4650655060", "1796292583.4650655070", "a.csv"],
      ["d", "65024", "42", "8", "1796292583.4650655060", "1796292583.4650655070", "a.csv"],
      ["f", "65024", "42", "8", "1796292583.4650655060", "1796292583.4650655070", "b.csv"],
    ];
    for (const fields of cases) {
      expect(
        findMountMismatches(line(fields), [mount], { compareInode: true }),
        fields.join(" "),
      ).toHaveLength(1);
    }
    const gvisor = line(["f", "17", "1", "8", "1796292583.4650655060", "1796292583.4650655070", "a.csv"]);
    expect(findMountMismatches(gvisor, [mount], { compareInode: false })).toEqual([]);
    expect(findMountMismatches(gvisor, [mount], { compareInode: true })).toHaveLength(1);
  });
});
