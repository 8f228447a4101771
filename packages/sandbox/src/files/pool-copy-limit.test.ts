import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mountableBytes, overPoolCopyLimit } from "./pool-copy-limit.ts";

let folder: string;
beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), "codeaction-copy-limit-"));
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function file(name: string, bytes: number, mode: number): string {
  const path = join(folder, name);
  writeFileSync(path, Buffer.alloc(bytes));
  chmodSync(path, mode);
  return path;
}

describe("the pool's copy limit: what counts", () => {
  it("counts the regular files others may read; a link, a private file, a folder or a missing path count 0", async () => {
    const shared = file("shared.csv", 3000, 0o644);
    const private_ = file("private.csv", 5000, 0o600);
    const link = join(folder, "link.csv");
    symlinkSync(shared, link);
    const paths = [shared, private_, link, folder, join(folder, "missing.csv")];
    expect(await mountableBytes(paths)).toBe(3000);
  });

  it("is over the limit only past it (a size or a byte count)", async () => {
    const shared = file("limit.csv", 2048, 0o644);
    expect(await overPoolCopyLimit([shared], "2K")).toEqual({ over: false, bytes: 2048 });
    expect(await overPoolCopyLimit([shared], 2047)).toEqual({ over: true, bytes: 2048 });
    expect(await overPoolCopyLimit([shared], 0)).toEqual({ over: true, bytes: 2048 });
  });
});
