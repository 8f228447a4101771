import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FilePlacementError } from "../errors/file-placement-error.ts";
import { SandboxManager } from "../manager.ts";
import { SandboxPrelaunch } from "../prelaunch/index.ts";
import type { PlacingProgress } from "./place-files.ts";

// session.placeFiles, the one placement routine: host files read-only at /workspace/data/<name>,
// placed once (a second call, or a prelaunch's worker, already did it), a full disk named as such.
const managers: SandboxManager[] = [];
let folder = "";

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-placements-"));
});
afterAll(async () => {
  await Promise.allSettled(managers.map((manager) => manager.close()));
  await rm(folder, { recursive: true, force: true });
});

function newManager(settings: { diskLimit?: string } = {}, options: { prelaunch?: SandboxPrelaunch } = {}) {
  const manager = new SandboxManager({ network: "none", pool: 0, ...settings }, options);
  managers.push(manager);
  return manager;
}

describe("session.placeFiles", () => {
  test("places each file byte for byte under its sanitised name, read-only in a sealed folder; a second call copies nothing", async () => {
    const big = randomBytes(5 * 1024 * 1024);
    await writeFile(join(folder, "big data.bin"), big);
    await writeFile(join(folder, ".hidden.csv"), "a\n1\n");
    const session = await newManager().createSession();
    const reports: PlacingProgress[] = [];
    const paths = [join(folder, "big data.bin"), join(folder, ".hidden.csv")];
    const placed = await session.placeFiles(paths, { onProgress: (report) => reports.push(report) });
    expect(placed).toEqual([
      { containerPath: "/workspace/data/big_data.bin", bytes: big.length, how: "copied" },
      { containerPath: "/workspace/data/_hidden.csv", bytes: 4, how: "copied" },
    ]);
    expect(reports.map((report) => report.bytesCopied)).toEqual([4 * 1024 * 1024, big.length, 4]);
    const { stdout } = await session.execute(
      "sha256sum /workspace/data/big_data.bin; stat -c '%a %n' /workspace/data /workspace/data/*; touch /workspace/data/new 2>/dev/null || echo sealed",
    );
    expect(stdout).toContain(createHash("sha256").update(big).digest("hex"));
    expect(stdout).toContain(
      "555 /workspace/data\n444 /workspace/data/_hidden.csv\n444 /workspace/data/big_data.bin",
    );
    expect(stdout).toContain("sealed");

    // Again: nothing is copied (a file replaced inside would stay as it is), one report per file at full size.
    await session.execute(
      "chmod 0755 /workspace/data && rm -f /workspace/data/_hidden.csv && echo b > /workspace/data/_hidden.csv",
    );
    const again: PlacingProgress[] = [];
    await session.placeFiles(paths, { onProgress: (report) => again.push(report) });
    expect(again).toEqual([
      { containerPath: "/workspace/data/big_data.bin", bytesCopied: big.length, totalBytes: big.length },
      { containerPath: "/workspace/data/_hidden.csv", bytesCopied: 4, totalBytes: 4 },
    ]);
    expect((await session.execute("cat /workspace/data/_hidden.csv")).stdout).toBe("b\n");

    // A host file whose size changed is placed again.
    await writeFile(join(folder, ".hidden.csv"), "a\n1\n2\n");
    await session.placeFiles(paths);
    expect((await session.execute("cat /workspace/data/_hidden.csv")).stdout).toBe("a\n1\n2\n");
    expect(await session.filesPlaced()).toEqual([
      { containerPath: "/workspace/data/big_data.bin", bytes: big.length, how: "copied" },
      { containerPath: "/workspace/data/_hidden.csv", bytes: 6, how: "copied" },
    ]);
  });

  test("skips what a prelaunch's worker placed, and places the rest", async () => {
    await writeFile(join(folder, "early.csv"), "x\n1\n");
    await writeFile(join(folder, "late.csv"), "y\n2\n");
    const prelaunch = SandboxPrelaunch.start({ network: "none" }, { files: [join(folder, "early.csv")] });
    const session = await newManager({}, { prelaunch }).createSession();
    const reports: PlacingProgress[] = [];
    await session.placeFiles([join(folder, "early.csv"), join(folder, "late.csv")], {
      onProgress: (report) => reports.push(report),
    });
    // early.csv once, at its full size (already there); late.csv copied (its end reported).
    expect(reports).toEqual([
      { containerPath: "/workspace/data/early.csv", bytesCopied: 4, totalBytes: 4 },
      { containerPath: "/workspace/data/late.csv", bytesCopied: 4, totalBytes: 4 },
    ]);
    expect((await session.execute("cat /workspace/data/early.csv /workspace/data/late.csv")).stdout).toBe(
      "x\n1\ny\n2\n",
    );
  });

  test("a file that does not fit is a FilePlacementError that names the disk limit; two files for one place are refused", async () => {
    await writeFile(join(folder, "three.bin"), randomBytes(3 * 1024 * 1024));
    const session = await newManager({ diskLimit: "2m" }).createSession();
    const error = await session.placeFiles([join(folder, "three.bin")]).catch((caught: unknown) => caught);
    expect(FilePlacementError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: "file-placement",
      noSpace: true,
      containerPath: "/workspace/data/three.bin",
    });
    expect((error as Error).message).toMatch(
      /did not fit .*No space left on device.*raise the sandbox's diskLimit/,
    );
    await twoFilesOfOneName();
    await expect(
      session.placeFiles([join(folder, "a", "same.csv"), join(folder, "b", "same.csv")]),
    ).rejects.toThrow(/would both be placed at \/workspace\/data\/same\.csv; rename one of them/);
  });
});

async function twoFilesOfOneName(): Promise<void> {
  for (const part of ["a", "b"]) {
    await mkdir(join(folder, part), { recursive: true });
    await writeFile(join(folder, part, "same.csv"), `${part}\n`);
  }
}
