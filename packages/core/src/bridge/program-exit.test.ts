import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { runLocally } from "../../test/local-relay.ts";

// How a program's process ends (bootstrap.py's _finish): as Python's exit does (threads joined,
// atexit functions run, exit statuses), every file it left open closed innermost last, and without
// the interpreter's object-by-object teardown. The relay run locally (protocol only).

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

async function folder(): Promise<string> {
  const made = await mkdtemp(join(tmpdir(), "codeaction-exit-"));
  folders.push(made);
  return made;
}

/** A zip or tar archive's listing by this machine's python3 (a broken archive throws). */
function listing(kind: "zip" | "tar", path: string): string {
  const script =
    kind === "zip"
      ? "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nprint(' '.join(z.namelist()), z.read(z.namelist()[0]).decode())"
      : "import sys, tarfile\nt = tarfile.open(sys.argv[1])\nm = t.getmembers()[0]\nprint(m.name, t.extractfile(m).read().decode())";
  return execFileSync("python3", ["-c", script, path], { encoding: "utf8" }).trim();
}

describe("a program's end", () => {
  it("joins its threads, runs its atexit functions and closes every file it left open, each before the one it writes into", async () => {
    const out = await folder();
    const program = [
      "import atexit, gzip, io, tarfile, threading, time, zipfile",
      `d = ${JSON.stringify(out)}`,
      'plain = open(d + "/plain.txt", "w")',
      'plain.write("left open")',
      'packed = gzip.open(d + "/packed.gz", "wt")',
      'packed.write("gzipped, left open")',
      'archive = zipfile.ZipFile(d + "/archive.zip", "w")',
      'member = archive.open("inner.txt", "w")',
      'member.write(b"inside a zip")',
      'tar = tarfile.open(d + "/archive.tar.gz", "w:gz")',
      'data = b"inside a tar"',
      'info = tarfile.TarInfo("inner.txt")',
      "info.size = len(data)",
      "tar.addfile(info, io.BytesIO(data))",
      "def later():",
      "    time.sleep(0.3)",
      '    with open(d + "/thread.txt", "w") as f:',
      '        f.write("the thread finished")',
      "threading.Thread(target=later).start()",
      'atexit.register(lambda: print("atexit ran", flush=True))',
      "class Marker:",
      "    def __del__(self):",
      '        print("finalized", flush=True)',
      "marker = Marker()",
      'print("RESULT: done")',
    ].join("\n");
    const run = await runLocally({ program, tools: [], stubsSource: "" });
    expect(run).toMatchObject({ status: "ok", result: "done", exitCode: 0 });
    expect(run.stdout).toContain("atexit ran");
    expect(await readFile(join(out, "plain.txt"), "utf8")).toBe("left open");
    expect(gunzipSync(await readFile(join(out, "packed.gz"))).toString()).toBe("gzipped, left open");
    expect(listing("zip", join(out, "archive.zip"))).toBe("inner.txt inside a zip");
    expect(listing("tar", join(out, "archive.tar.gz"))).toBe("inner.txt inside a tar");
    expect(await readFile(join(out, "thread.txt"), "utf8")).toBe("the thread finished");
    // The interpreter is not torn down object by object: a global's __del__ does not run.
    expect(run.stdout).not.toContain("finalized");
  });

  it("keeps sys.exit's statuses: a number, a message (status 1), and an uncaught exception's 1", async () => {
    const numbered = await runLocally({ program: "import sys\nsys.exit(3)", tools: [], stubsSource: "" });
    expect(numbered.exitCode).toBe(3);
    const message = await runLocally({
      program: 'import sys\nsys.exit("bye now")',
      tools: [],
      stubsSource: "",
    });
    expect(message.exitCode).toBe(1);
    expect(message.stderr).toBe("bye now\n");
    const clean = await runLocally({ program: "import sys\nsys.exit()", tools: [], stubsSource: "" });
    expect(clean.exitCode).toBe(0);
    const raised = await runLocally({ program: "raise ValueError('no')", tools: [], stubsSource: "" });
    expect(raised.exitCode).toBe(1);
    expect(raised.stderr).toContain("ValueError: no");
  });
});
