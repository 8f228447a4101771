import { PathRefusedError, type SandboxManager } from "@codeaction/sandbox";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createShellTools } from "../../packages/core/src/tools-pattern/shell-tools.ts";
import {
  backends,
  docker,
  hostileMarker,
  readyManager,
  resultJson,
  runCase,
  sentinelName,
} from "../support/harness.ts";

// Catalogue F1..F10: the filesystem. Each case is a hostile program run through runProgram in a
// fresh container; runCase also checks the container is gone and the host unchanged.

describe.each(backends)("filesystem (backend %s)", (backend) => {
  let manager: SandboxManager;
  beforeAll(async () => {
    manager = await readyManager(backend);
  });
  afterAll(async () => {
    await manager?.close();
  });

  test("F1: writes to /, /etc/passwd and site.py fail read-only; the next run sees nothing changed", async () => {
    const program = `
import errno, glob, hashlib, json, os
targets = ["/${hostileMarker}-root", "/etc/passwd", *glob.glob("/usr/lib/python3*/site.py")]
digests = {path: hashlib.sha256(open(path, "rb").read()).hexdigest() for path in targets[1:]}
outcome = {}
for path in targets:
    try:
        with open(path, "a") as file:
            file.write("# ${hostileMarker}\\n")
        outcome[path] = "written"
    except OSError as error:
        outcome[path] = errno.errorcode[error.errno]
print("RESULT:", json.dumps({"outcome": outcome, "digests": digests}))
`;
    const first = resultJson<{ outcome: Record<string, string>; digests: Record<string, string> }>(
      await runCase(manager, { program }),
    );
    expect(Object.keys(first.outcome).length).toBeGreaterThanOrEqual(3);
    for (const [path, outcome] of Object.entries(first.outcome)) {
      expect(["EROFS", "EACCES"], path).toContain(outcome);
    }
    const second = resultJson<{ digests: Record<string, string>; root: boolean }>(
      await runCase(manager, {
        program: `
import hashlib, json, os
paths = ${JSON.stringify(Object.keys(first.digests))}
print("RESULT:", json.dumps({
    "digests": {path: hashlib.sha256(open(path, "rb").read()).hexdigest() for path in paths},
    "root": os.path.exists("/${hostileMarker}-root"),
}))
`,
      }),
    );
    expect(second.digests).toEqual(first.digests);
    expect(second.root).toBe(false);
  });

  test("F2: /proc/self/root/.., /proc/1/root and /proc/1/cwd stay inside the container's root", async () => {
    const result = resultJson<Record<string, unknown>>(
      await runCase(manager, {
        program: `
import json, os
def identity(path):
    try:
        info = os.stat(path)
        return [info.st_dev, info.st_ino]
    except OSError as error:
        return error.strerror
def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as error:
        return error.strerror
host_paths = ["/work/main/package.json", "/tmp/${sentinelName}", "/var/run/docker.sock", "/var/lib/docker"]
probes = {}
for base in ["/proc/self/root/..", "/proc/self/root/../..", "/proc/1/root", "/proc/1/root/..", "/proc/1/cwd/../.."]:
    probes[base] = {
        "identity": identity(base),
        "listing": listing(base),
        "host": [path for path in host_paths if os.path.exists(base + path)],
    }
print("RESULT:", json.dumps({"root": identity("/"), "listing": sorted(os.listdir("/")), "probes": probes,
                            "direct": [path for path in host_paths if os.path.exists(path)]}))
`,
      }),
    );
    const probes = result.probes as Record<string, { identity: unknown; listing: unknown; host: string[] }>;
    expect(result.direct).toEqual([]);
    for (const [base, probe] of Object.entries(probes)) {
      expect(probe.host, base).toEqual([]);
      // Either it resolves to the container's own root, or access is denied (gVisor hides /proc/1/root).
      if (Array.isArray(probe.identity)) {
        expect(probe.identity, base).toEqual(result.root);
        expect(probe.listing, base).toEqual(result.listing);
      } else {
        expect(probe.identity, base).toMatch(/Permission denied|No such file/);
      }
    }
  });

  test("F3: a program starts with fds 0-4 only (stdin /dev/null, pipes); none resolves to a host path", async () => {
    const result = resultJson<{ fds: Record<string, string> }>(
      await runCase(manager, {
        program: `
import json, os
fds = {}
for name in os.listdir("/proc/self/fd"):
    try:
        fds[name] = os.readlink(f"/proc/self/fd/{name}")
    except FileNotFoundError:
        pass  # the descriptor os.listdir itself used, closed by now
print("RESULT:", json.dumps({"fds": fds}))
`,
      }),
    );
    expect(Object.keys(result.fds).sort()).toEqual(["0", "1", "2", "3", "4"]);
    expect(result.fds["0"]).toBe("/dev/null");
    for (const name of ["1", "2", "3", "4"]) expect(result.fds[name]).toMatch(/^pipe:\[\d+\]$/);
  });

  test("F4: a /workspace link to /etc/shadow: the host-side read (shell mode read_file) refuses it", async () => {
    await runCase(manager, {
      program: `
import os
os.symlink("/etc/shadow", "/workspace/${hostileMarker}-shadow")
os.symlink("/etc/passwd", "/workspace/${hostileMarker}-passwd")
os.symlink("/", "/workspace/${hostileMarker}-root")
print("RESULT: linked")
`,
      after: async (session, run) => {
        expect(run.status, run.stderr).toBe("ok");
        for (const name of ["shadow", "passwd"]) {
          await expect(session.readFile(`/workspace/${hostileMarker}-${name}`)).rejects.toBeInstanceOf(
            PathRefusedError,
          );
        }
        await expect(session.listFiles(`/workspace/${hostileMarker}-root`)).rejects.toBeInstanceOf(
          PathRefusedError,
        );
        const readTool = createShellTools(session).find((tool) => tool.name === "sandbox_read_file");
        expect(readTool).toBeDefined();
        const answer = await readTool!
          .invoke(
            { path: `/workspace/${hostileMarker}-passwd` },
            { runId: "f4", signal: new AbortController().signal },
          )
          .then(
            (value) => JSON.stringify(value),
            (error: Error) => `refused: ${error.message}`,
          );
        expect(answer).not.toMatch(/root:x:0:0/);
        expect(answer).toMatch(/refused|outside|link/i);
      },
    });
  });

  test("F5: core_pattern, sysrq-trigger and uevent_helper cannot be written", async () => {
    const result = resultJson<Record<string, string>>(
      await runCase(manager, {
        program: `
import errno, json
outcome = {}
for path in ["/proc/sys/kernel/core_pattern", "/proc/sysrq-trigger", "/sys/kernel/uevent_helper"]:
    try:
        with open(path, "w") as file:
            file.write("|/tmp/${hostileMarker}")
        outcome[path] = "written"
    except OSError as error:
        outcome[path] = errno.errorcode[error.errno]
print("RESULT:", json.dumps(outcome))
`,
      }),
    );
    for (const [path, outcome] of Object.entries(result)) {
      expect(["EROFS", "EACCES", "EPERM", "ENOENT"], path).toContain(outcome);
    }
  });

  test("F6: /dev/sda, /dev/mem, /dev/kmsg, /dev/kvm are absent or denied", async () => {
    const result = resultJson<{ outcome: Record<string, string>; devices: string[] }>(
      await runCase(manager, {
        program: `
import errno, json, os
outcome = {}
for path in ["/dev/sda", "/dev/mem", "/dev/kmsg", "/dev/kvm", "/dev/port", "/dev/nvme0n1"]:
    try:
        os.close(os.open(path, os.O_RDONLY))
        outcome[path] = "opened"
    except OSError as error:
        outcome[path] = errno.errorcode[error.errno]
print("RESULT:", json.dumps({"outcome": outcome, "devices": sorted(os.listdir("/dev"))}))
`,
      }),
    );
    for (const [path, outcome] of Object.entries(result.outcome)) {
      expect(["ENOENT", "EACCES", "EPERM"], path).toContain(outcome);
    }
    expect(result.devices.filter((name) => /^(sd|hd|vd|nvme|mem|kmem|kvm|port|loop)/.test(name))).toEqual([]);
  });

  test("F7: mount, pivot_root, chroot and mknod are refused (gVisor: no host effect)", async () => {
    const result = resultJson<Record<string, string>>(
      await runCase(manager, {
        program: `
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
def call(result):
    return "ok" if result == 0 else errno.errorcode.get(ctypes.get_errno(), "?")
outcome = {}
outcome["mount"] = call(libc.mount(b"tmpfs", b"/workspace", b"tmpfs", 0, None))
outcome["mount-proc"] = call(libc.mount(b"proc", b"/workspace", b"proc", 0, None))
outcome["pivot_root"] = call(libc.syscall(155, b"/workspace", b"/workspace"))
try:
    os.chroot("/workspace")
    outcome["chroot"] = "ok"
except OSError as error:
    outcome["chroot"] = errno.errorcode[error.errno]
try:
    os.mknod("/workspace/${hostileMarker}-mem", 0o20600, os.makedev(1, 1))
    try:
        os.close(os.open("/workspace/${hostileMarker}-mem", os.O_RDONLY))
        outcome["mknod"] = "opened"
    except OSError as error:
        outcome["mknod"] = "created, open " + errno.errorcode[error.errno]
except OSError as error:
    outcome["mknod"] = errno.errorcode[error.errno]
print("RESULT:", json.dumps(outcome))
`,
      }),
    );
    expect(result.mount).not.toBe("ok");
    expect(result["mount-proc"]).not.toBe("ok");
    expect(result.pivot_root).not.toBe("ok");
    expect(result.chroot).not.toBe("ok");
    if (backend === "docker") {
      expect(result).toEqual({
        mount: "EPERM",
        "mount-proc": "EPERM",
        pivot_root: "EPERM",
        chroot: "EPERM",
        mknod: "EPERM",
      });
    } else {
      // gVisor's own kernel may create the node in its memory file system; it never reaches a host device.
      expect(result.mknod).not.toBe("opened");
    }
  });

  test("F8: an executable written to /tmp, /var/tmp, /dev/shm or /workspace cannot run (noexec)", async () => {
    const result = resultJson<Record<string, string>>(
      await runCase(manager, {
        program: `
import errno, json, os, shutil, subprocess
outcome = {}
for folder in ["/tmp", "/var/tmp", "/dev/shm", "/workspace"]:
    path = f"{folder}/${hostileMarker}-exe"
    try:
        shutil.copy("/bin/true", path)
        os.chmod(path, 0o755)
        outcome[folder] = "ran, exit %d" % subprocess.run([path]).returncode
    except OSError as error:
        outcome[folder] = errno.errorcode[error.errno]
print("RESULT:", json.dumps(outcome))
`,
      }),
    );
    for (const folder of ["/tmp", "/var/tmp", "/dev/shm", "/workspace"]) {
      expect(result[folder], folder).toBe("EACCES");
    }
  });

  test("F9: /workspace, /tmp and /dev/shm are empty at start: nothing from an earlier run", async () => {
    const leave = `
import os
for folder in ["/workspace", "/tmp", "/var/tmp", "/dev/shm"]:
    with open(f"{folder}/${hostileMarker}-left", "w") as file:
        file.write("from the first run")
print("RESULT: left")
`;
    expect((await runCase(manager, { program: leave })).status).toBe("ok");
    const result = resultJson<Record<string, string[]>>(
      await runCase(manager, {
        program: `
import json, os
print("RESULT:", json.dumps({folder: sorted(os.listdir(folder)) for folder in
    ["/workspace", "/workspace/.codeaction", "/tmp", "/var/tmp", "/dev/shm"]}))
`,
      }),
    );
    // The bridge folder is the run's own (docs/bridge-protocol.md): the program, the module, the requests.
    expect(result).toEqual({
      "/workspace": [".codeaction"],
      "/workspace/.codeaction": ["lib", "program.py", "requests", "responses"],
      "/tmp": [],
      "/var/tmp": [],
      "/dev/shm": [],
    });
  });

  test("F10: the image declares no VOLUME and a run creates no volume", async () => {
    const client = await docker();
    const image = await client.getImage(manager.config.image).inspect();
    expect(image.Config.Volumes ?? {}).toEqual({});
    const volumesBefore = new Set(((await client.listVolumes()).Volumes ?? []).map((volume) => volume.Name));
    await runCase(manager, {
      program: `print("RESULT: ran")`,
      after: async (session) => {
        const info = await session.inspect();
        expect(info.Mounts).toEqual([]);
      },
    });
    const created = ((await client.listVolumes()).Volumes ?? [])
      .map((volume) => volume.Name)
      .filter((name) => !volumesBefore.has(name));
    expect(created).toEqual([]);
  });
});
