import { execFileSync } from "node:child_process";
import type { SandboxManager, SandboxSession } from "@codeaction/sandbox";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ToolSpec } from "../../packages/core/src/tools/tool-spec.ts";
import { backends, docker, echoTool, readyManager, resultJson, runCase } from "../support/harness.ts";

// The red team's second round (docs/security.md, H cases): whatever a program sends over the bridge,
// what the host process keeps for its run stays bounded, and abuse ends the run as the program's
// failure. Each case failed on the code before these bounds.

/** A tool whose result is larger than the bridge's 16 MiB answer limit. */
const oversizedTool: ToolSpec = {
  name: "oversized",
  description: "Returns 17 MiB.",
  origin: "tool",
  inputSchema: { type: "object", properties: {} },
  invoke: async () => "y".repeat(17 * 1024 * 1024),
};

/** Bytes on the host's disk under Docker's data root for one container (its folder, logs included). */
async function containerFolderBytes(session: SandboxSession): Promise<number> {
  const client = await docker();
  const root = (await client.info()).DockerRootDir as string;
  const output = execFileSync("du", ["-sb", `${root}/containers/${session.containerId}`], {
    encoding: "utf8",
  });
  return Number(output.split("\t")[0]);
}

/** Opens every descriptor of every process whose command line holds `needle`, and writes `chunk` to it. */
const floodDescriptors = `
import json, os
def flood(needle, chunk, total):
    report = {"processes": 0, "opened": [], "refused": []}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as file:
                if needle not in file.read():
                    continue
        except OSError:
            continue
        report["processes"] += 1
        for fd in ("0", "1", "2"):
            path = "/proc/%s/fd/%s" % (name, fd)
            try:
                target = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as error:
                report["refused"].append(error.strerror)
                continue
            report["opened"].append(fd)
            written = 0
            try:
                while written < total:
                    written += os.write(target, chunk)
            except OSError:
                pass
            os.close(target)
    return report
`;

describe.each(backends)("the host stays bounded (backend %s)", (backend) => {
  let manager: SandboxManager;
  beforeAll(async () => {
    manager = await readyManager(backend);
  });
  afterAll(async () => {
    await manager?.close();
  });

  test("H1, H2: 1 MiB arguments (known, unknown and over-the-cap tools) and a 17 MiB result are recorded as sizes and previews", async () => {
    const { tool, calls } = echoTool();
    const run = await runCase(manager, {
      tools: [tool, oversizedTool],
      maxToolCalls: 6,
      program: `
import json
from codeaction_tools import _call
payload = "{}" * (512 * 1024 - 64)
seen = []
try:
    oversized()
except ToolError as error:
    seen.append(str(error))
for name in ["echo", "nope", "echo", "nope", "echo", "echo", "echo"]:
    try:
        _call(name, {"value": payload})
        seen.append("ok")
    except ToolError as error:
        seen.append(type(error).__name__)
print("RESULT:", json.dumps(seen))
`,
    });
    expect(run.status, run.stderr).toBe("tool-limit");
    const seen = JSON.parse(run.result ?? "[]") as string[];
    expect(seen[0]).toMatch(/over the bridge's limit of 16777216/);
    expect(seen.slice(1)).toEqual([
      "ok",
      "ToolError",
      "ok",
      "ToolError",
      "ok",
      "ToolCallLimitExceeded",
      "ToolCallLimitExceeded",
    ]);
    expect(calls).toHaveLength(3);
    expect(run.toolCalls).toHaveLength(8);
    // About 24 MiB went through the bridge; its records keep a few kB.
    expect(JSON.stringify(run.toolCalls).length).toBeLessThan(40_000);
    expect(run.toolCalls[0]).toMatchObject({
      tool: "oversized",
      status: "error",
      resultBytes: 17 * 1024 * 1024 + 2,
    });
    for (const call of run.toolCalls.slice(1)) {
      expect(call.requestBytes).toBeGreaterThan(1024 * 1024 - 200);
      expect(call.args).toBeUndefined();
    }
    expect(run.toolCalls.map((call) => call.status)).toEqual([
      "error",
      "ok",
      "unknown-tool",
      "ok",
      "unknown-tool",
      "ok",
      "limit",
      "limit",
    ]);
  });

  test("H3: ringing the doorbell with valid ids and no request files ends the run as a tool-limit failure", async () => {
    const run = await runCase(manager, {
      maxToolCalls: 10,
      execTimeout: 60,
      program: `
import itertools, os
fd = int(os.environ["CODEACTION_REQUEST_FD"])
for index in itertools.count():
    os.write(fd, b"ring%d\\n" % index)
`,
    });
    expect(run.status).toBe("tool-limit");
    expect(run.toolCalls.length).toBeLessThanOrEqual(10 + 100);
    expect(run.toolCalls.every((call) => call.status === "invalid" || call.status === "limit")).toBe(true);
  });

  test("H6: a program that kills its own relay fails as an error it can repair, not as infrastructure", async () => {
    const run = await runCase(manager, {
      program: `
import os, signal, time
os.kill(os.getppid(), signal.SIGKILL)
time.sleep(5)
print("RESULT: never")
`,
    });
    expect(run.status).toBe("error");
    expect(run.infrastructureError).toBeUndefined();
    expect(run.stderr).toMatch(/the bridge relay was killed by signal 9/);
  });

  test("H4: a flood of the kill helper's descriptors: closed to the program under runc, cut off by the host under gVisor; kills still work", async () => {
    const run = await runCase(manager, {
      program: `${floodDescriptors}
print("RESULT:", json.dumps(flood(b"codeaction-kill-helper", b"killed 0 survivors 0\\n" * 4096, 64 * 1024 * 1024)))
`,
      after: async (session) => {
        // The helper answers truthfully: a command past its timeout is killed, the next one runs.
        const slow = await session.execute("sleep 60", { timeout: 2 });
        expect(slow.timedOut).toBe(true);
        const next = await session.execute("echo still here", { timeout: 30 });
        expect(next.stdout.trim()).toBe("still here");
      },
    });
    const report = resultJson<{ processes: number; opened: string[]; refused: string[] }>(run);
    expect(report.processes).toBe(1);
    if (backend === "docker") {
      // runc: the helper is not dumpable from its first line, so its descriptors are closed to the program.
      expect(report.opened).toEqual([]);
      expect(report.refused).toHaveLength(3);
    }
    // gVisor does not honour PR_SET_DUMPABLE for /proc/<pid>/fd: the writes reach the host, which reads
    // one line at most 4096 bytes long, takes the first answer nobody asked for as a failed helper and
    // stops reading; the next kill (in \`after\`) starts a fresh helper and still works.
  });

  test("H5: writing to PID 1's stdout and stderr lands nowhere on the host's disk", async () => {
    let bytes = -1;
    const run = await runCase(manager, {
      program: `
import json, os
report = {}
for fd in ("1", "2"):
    try:
        target = os.open("/proc/1/fd/" + fd, os.O_WRONLY)
    except OSError as error:
        report[fd] = error.strerror
        continue
    written = 0
    try:
        while written < 64 * 1024 * 1024:
            written += os.write(target, b"x" * 65536)
    except OSError as error:
        report[fd + " write"] = error.strerror
    report[fd] = written
print("RESULT:", json.dumps(report))
`,
      after: async (session) => {
        bytes = await containerFolderBytes(session);
        const info = await (await docker()).getContainer(session.containerId).inspect();
        expect(info.HostConfig.LogConfig?.Type).toBe("none");
      },
    });
    const report = resultJson<Record<string, number | string>>(run);
    // runc refuses the open (PID 1 is not dumpable); gVisor lets it through to /dev/null.
    for (const fd of ["1", "2"]) expect([64 * 1024 * 1024, "Permission denied"]).toContain(report[fd]);
    expect(bytes).toBeGreaterThanOrEqual(0);
    expect(bytes).toBeLessThan(1024 * 1024);
  });
});
