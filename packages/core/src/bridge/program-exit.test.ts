import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { runLocally } from "../../test/local-relay.ts";

// How a program's process ends (bootstrap.py's _finish): as Python's exit does (threads joined,
// atexit functions run, exit statuses), every file it left open for writing closed innermost last,
// and, when nothing else needs finalizing, without the interpreter's object-by-object teardown.
// The relay run locally (protocol only).

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
  return execFileSync(python, ["-c", script, path], { encoding: "utf8" }).trim();
}

/** The interpreter the local relay runs (local-relay.ts): the system's python3 where there is one. */
const python = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

/**
 * Which end bootstrap.py chooses for a program that ran `setup`: "fast" (its files closed, no
 * teardown) or "teardown" (Python's own exit). Its helpers run in this machine's python3.
 */
function endChosenAfter(setup: string): string {
  const source = readFileSync(new URL("./bootstrap.py", import.meta.url), "utf8");
  const helpers = source.slice(source.indexOf("def _attribute("), source.indexOf("def _finish("));
  const script = `import sys, threading\n${helpers}\n${setup}\nprint("teardown" if _files_at_exit() is None else "fast")`;
  return execFileSync(python, ["-c", script], { encoding: "utf8" }).trim();
}

describe("the end a program gets", () => {
  it("is the fast one when only files need finishing, Python's own when anything else does", () => {
    expect(endChosenAfter('written = open("/dev/null", "w")\nrows = [[n] for n in range(1000)]')).toBe(
      "fast",
    );
    expect(endChosenAfter("class Marker:\n    def __del__(self):\n        pass\nmarker = Marker()")).toBe(
      "teardown",
    );
    expect(endChosenAfter("def paused():\n    yield 1\n    yield 2\nheld = paused()\nnext(held)")).toBe(
      "teardown",
    );
    // A generator not started yet has no finally block to run.
    expect(endChosenAfter("def later():\n    yield 1\nheld = later()")).toBe("fast");
    expect(endChosenAfter('import sqlite3\nconnection = sqlite3.connect(":memory:")')).toBe("teardown");
  });
});

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
      // A collection at the interpreter's teardown calls this callback (Python collects there even
      // with the collector off); once the atexit functions have run, nothing else collects.
      "import gc, sys",
      "ending = []",
      'gc.callbacks.append(lambda phase, info: ending and phase == "stop" and sys.__stdout__.write("teardown gc\\n"))',
      "atexit.register(lambda: (gc.disable(), ending.append(True)))",
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
    // The interpreter is not torn down object by object: no collection ran at its end.
    expect(run.stdout).not.toContain("teardown gc");
  });

  it("a replaced sys.stdout is closed like any file: its gzip stream comes out whole", async () => {
    const out = await folder();
    const program = [
      "import gzip, io, sys",
      `sys.stdout = io.TextIOWrapper(gzip.open(${JSON.stringify(join(out, "stdout.gz"))}, "wb"))`,
      'print("to the archive")',
    ].join("\n");
    const run = await runLocally({ program, tools: [], stubsSource: "" });
    expect(run.exitCode).toBe(0);
    expect(gunzipSync(await readFile(join(out, "stdout.gz"))).toString()).toBe("to the archive\n");
  });

  it("leaves the end to Python when something else needs finalizing: a __del__, a paused generator", async () => {
    const program = [
      "class Marker:",
      "    def __del__(self):",
      '        print("finalized", flush=True)',
      "marker = Marker()",
      "def paused():",
      "    try:",
      "        yield 1",
      "    finally:",
      '        print("generator finished", flush=True)',
      "held = paused()",
      "next(held)",
      'print("RESULT: done")',
    ].join("\n");
    const run = await runLocally({ program, tools: [], stubsSource: "" });
    expect(run).toMatchObject({ status: "ok", result: "done", exitCode: 0 });
    expect(run.stdout).toContain("finalized");
    expect(run.stdout).toContain("generator finished");
  });

  it("a tar stream over a file of the program's, finished by its own __del__, comes out whole as with Python's exit", async () => {
    const out = await folder();
    const program = [
      "import io, tarfile",
      `sink = open(${JSON.stringify(join(out, "stream.tar.gz"))}, "wb")`,
      'tar = tarfile.open(fileobj=sink, mode="w|gz")',
      'data = b"inside a tar stream"',
      'info = tarfile.TarInfo("inner.txt")',
      "info.size = len(data)",
      "tar.addfile(info, io.BytesIO(data))",
      'print("RESULT: done")',
    ].join("\n");
    const run = await runLocally({ program, tools: [], stubsSource: "" });
    expect(run).toMatchObject({ status: "ok", result: "done", exitCode: 0 });
    expect(listing("tar", join(out, "stream.tar.gz"))).toBe("inner.txt inside a tar stream");
  });

  it("a daemon thread blocked reading a pipe does not hold the program's end", async () => {
    const program = [
      "import subprocess, threading",
      'child = subprocess.Popen(["sleep", "60"], stdout=subprocess.PIPE)',
      "threading.Thread(target=child.stdout.read, daemon=True).start()",
      'print("RESULT: done")',
    ].join("\n");
    const run = await runLocally({ program, tools: [], stubsSource: "", execTimeout: 30 });
    expect(run).toMatchObject({ status: "ok", result: "done", exitCode: 0 });
  });

  it("flushes what C code wrote through the C library's buffers", async () => {
    const out = await folder();
    const program = [
      "import ctypes",
      "libc = ctypes.CDLL(None)",
      "libc.fopen.restype = ctypes.c_void_p",
      "libc.fputs.argtypes = [ctypes.c_char_p, ctypes.c_void_p]",
      `handle = libc.fopen(${JSON.stringify(join(out, "from-c.txt"))}.encode(), b"w")`,
      'libc.fputs(b"written by C", handle)',
      'print("RESULT: done")',
    ].join("\n");
    const run = await runLocally({ program, tools: [], stubsSource: "" });
    expect(run.exitCode).toBe(0);
    expect(await readFile(join(out, "from-c.txt"), "utf8")).toBe("written by C");
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
