import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { runCli } from "../../packages/cli/test/run-cli.ts";
import { backends, fenced, probeOutcomes, suiteManager } from "../support/harness.ts";

// Issue 29, finding 10: a FIFO given to --csv, `kill -9 -1` under gVisor, the host's hardware in
// /proc and /sys.

function temporaryFolder(): string {
  return mkdtempSync(join(tmpdir(), "codeaction-security-"));
}

describe.each(backends)("smaller findings of round three (backend %s)", (backend) => {
  const manager = suiteManager(backend);

  test("finding 10: the host's memory map, I/O ports and PCI devices are hidden (/proc/iomem, /sys/bus/pci)", async () => {
    const outcome = await probeOutcomes<Record<string, string | string[]>>(
      manager(),
      `
def read(path):
    try:
        return open(path, "rb").read()[:8192].decode(errors="replace")
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))
def listing(path):
    try:
        return sorted(os.listdir(path))[:20]
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))
print("RESULT:", json.dumps({
    "/proc/iomem": read("/proc/iomem"),
    "/proc/ioports": read("/proc/ioports"),
    "/sys/bus/pci/devices": listing("/sys/bus/pci/devices"),
    "/sys/bus/pci": listing("/sys/bus/pci"),
    "/sys/devices/pci0000:00": listing("/sys/devices/pci0000:00"),
    "/sys/class/pci_bus": listing("/sys/class/pci_bus"),
}))
`,
    );
    // runc: each file is /dev/null, each folder an empty tmpfs. gVisor: its own kernel has none of them.
    for (const path of ["/proc/iomem", "/proc/ioports"]) {
      expect(["", "ENOENT"], `${path}: ${String(outcome[path]).slice(0, 200)}`).toContain(outcome[path]);
    }
    for (const path of [
      "/sys/bus/pci/devices",
      "/sys/bus/pci",
      "/sys/devices/pci0000:00",
      "/sys/class/pci_bus",
    ]) {
      const found = outcome[path];
      expect(Array.isArray(found) ? found : [], path).toEqual([]);
    }
  });

  test("finding 10: `kill -9 -1` from the program is reported as a kill, never as the memory limit (the CLI's sandbox run)", async () => {
    const folder = temporaryFolder();
    try {
      const program = join(folder, "kill-all.py");
      writeFileSync(
        program,
        'import os, signal\nprint("before", flush=True)\nos.kill(-1, signal.SIGKILL)\nprint("after")\n',
      );
      const gvisor = backend === "gvisor" ? ["--gvisor", "--network", "none"] : [];
      const run = await runCli(["sandbox", "run", program, ...gvisor], { cwd: folder });
      expect(run.stderr).toMatch(/\[sandbox\] exit 137: killed by signal 9, not by the memory limit/);
      expect(run.stderr).not.toMatch(/over its memory limit/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe("a FIFO given to --csv (no container: refused before anything starts)", () => {
  test("finding 10: `codeaction ask --csv FIFO` fails at once with an error naming the FIFO, instead of waiting for a writer", async () => {
    const folder = temporaryFolder();
    try {
      const fifo = join(folder, "orders.csv");
      execFileSync("mkfifo", [fifo]);
      const replay = join(folder, "replay.json");
      writeFileSync(replay, JSON.stringify({ replies: [fenced('print("RESULT: 1")')] }));
      const run = await runCli(
        ["ask", "--no-journal", "--csv", fifo, "--replay", replay, "How many orders?"],
        {
          cwd: folder,
          timeoutMs: 60_000,
        },
      );
      expect(run.exitCode, run.stderr).toBe(1);
      expect(run.stderr).toContain(`${fifo}: this is a FIFO (named pipe), not a regular file`);
      expect(run.stderr).toMatch(/save the data to a file first/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 90_000);
});
