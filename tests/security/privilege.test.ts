import { describe, expect, test } from "vitest";
import { defaultUserRange } from "../../packages/sandbox/src/config.ts";
import { backends, hostileMarker, probeOutcomes, suiteManager } from "../support/harness.ts";

// Catalogue P1..P10: privilege. Under runc every call is refused (EPERM from the capability check or
// the sandbox's seccomp profile). Under gVisor each exec installs the same refusals first (the
// sandbox's syscall guard; runsc --oci-seccomp is not used, see docs/security.md), and gVisor answers
// some calls from its own kernel first (ENOSYS): there most tests assert that nothing was gained on
// the host, not a particular errno.

type Outcomes = Record<string, string>;

describe.each(backends)("privilege (backend %s)", (backend) => {
  const manager = suiteManager(backend);

  const probe = (body: string): Promise<Outcomes> => probeOutcomes<Outcomes>(manager(), body);

  /** runc: exactly EPERM; gVisor: anything but success. */
  const expectRefused = (outcomes: Outcomes, names: string[]) => {
    for (const name of names) {
      if (backend === "docker") expect(outcomes[name], name).toBe("EPERM");
      else expect(outcomes[name], name).not.toBe("ok");
    }
  };

  test("P1: not root, no effective capabilities, no_new_privs set, seccomp filtering", async () => {
    const outcome = await probe(`
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
status = {key: value.strip() for key, value in status.items()}
print("RESULT:", json.dumps({
    "uid": status["Uid"], "gid": status["Gid"], "capEff": status["CapEff"], "capPrm": status["CapPrm"],
    "capBnd": status["CapBnd"], "noNewPrivsLine": status.get("NoNewPrivs"), "seccomp": status.get("Seccomp"),
    "noNewPrivs": str(libc.prctl(39, 0, 0, 0, 0)),
}))
`);
    // The sandbox's own uid from the default userRange; real, effective, saved and fs ids all the same.
    const [uid] = outcome.uid!.split("\t");
    expect(Number(uid)).toBeGreaterThanOrEqual(defaultUserRange.first);
    expect(Number(uid)).toBeLessThan(defaultUserRange.first + defaultUserRange.count);
    expect(outcome.uid!.split("\t").every((field) => field === uid)).toBe(true);
    expect(outcome.gid!.split("\t").every((field) => field === uid)).toBe(true);
    expect(outcome.capEff).toBe("0000000000000000");
    expect(outcome.capPrm).toBe("0000000000000000");
    expect(outcome.capBnd).toBe("0000000000000000");
    expect(outcome.noNewPrivs).toBe("1");
    // gVisor reports the seccomp filter the exec installed (the syscall guard) but has no NoNewPrivs line.
    expect(outcome.seccomp).toBe("2");
    if (backend === "docker") expect(outcome.noNewPrivsLine).toBe("1");
  });

  test("P2: setuid binaries (su, passwd, mount) give no elevation; the image has no setuid file", async () => {
    const outcome = await probe(`
import stat, subprocess
setuid = []
for folder, subfolders, files in os.walk("/"):
    if folder == "/" :
        subfolders[:] = [name for name in subfolders if name not in ("proc", "sys", "dev")]
    for name in files:
        path = os.path.join(folder, name)
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) and mode & (stat.S_ISUID | stat.S_ISGID):
            setuid.append(path)
runs = {}
for command in (["su", "-c", "id -u"], ["passwd", "-d", "root"], ["mount", "-t", "tmpfs", "none", "/workspace"]):
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
        runs[command[0]] = [done.returncode, done.stdout.decode().strip()]
    except FileNotFoundError:
        runs[command[0]] = "absent"
print("RESULT:", json.dumps({"setuid": setuid, "runs": runs, "euid": os.geteuid(), "uid": os.getuid()}))
`);
    const result = outcome as unknown as {
      setuid: string[];
      runs: Record<string, [number, string] | "absent">;
      euid: number;
      uid: number;
    };
    expect(result.setuid).toEqual([]);
    for (const [command, run] of Object.entries(result.runs)) {
      if (run === "absent") continue;
      expect(run[0], command).not.toBe(0);
      expect(run[1], command).not.toBe("0");
    }
    expect(result.euid).toBe(result.uid);
    expect(result.uid).toBeGreaterThanOrEqual(defaultUserRange.first);
  });

  test("P3: ptrace of PID 1 and of the relay is denied", async () => {
    const outcome = await probe(`
def trace(pid):
    result = syscall(101, 16, pid, 0, 0)  # PTRACE_ATTACH
    if result == "ok":
        os.waitpid(pid, getattr(os, "__WALL", 0x40000000))
        syscall(101, 17, pid, 0, 0)  # PTRACE_DETACH
    return result
print("RESULT:", json.dumps({
    "pid1": trace(1),
    "pid1Command": open("/proc/1/cmdline", "rb").read().split(b"\\0")[0].decode(),
    "relay": trace(os.getppid()),
}))
`);
    expect(outcome.relay).not.toBe("ok");
    // PID 1 is the sandbox's own init, which made itself non-dumpable: no attach, same uid or not.
    expect(outcome.pid1Command).toBe("python3");
    expect(["EPERM", "EACCES"]).toContain(outcome.pid1);
  });

  test("P4: unshare -U, -m, -n are refused", async () => {
    const outcome = await probe(`
def try_namespace(flag):
    def inside():
        result = syscall(272, flag)
        if result != "ok":
            return result
        # Whatever was gained, use it: try to mount over / and to see the host's interfaces.
        mounted = syscall(165, b"tmpfs", b"/tmp", b"tmpfs", 0, 0)
        return "ok; mount " + mounted + "; interfaces " + ",".join(name for _, name in socket.if_nameindex())
    return in_child(inside)
print("RESULT:", json.dumps({"user": try_namespace(0x10000000), "mount": try_namespace(0x00020000),
                            "network": try_namespace(0x40000000)}))
`);
    // Refused under both runtimes: by the profile under runc, by the exec's syscall guard under gVisor
    // (before, gVisor granted all three inside its own kernel).
    expect(outcome).toEqual({ user: "EPERM", mount: "EPERM", network: "EPERM" });
  });

  test("P5: init_module, finit_module, delete_module, kexec_load, kexec_file_load are refused", async () => {
    const outcome = await probe(`
print("RESULT:", json.dumps({
    "init_module": syscall(175, 0, 0, b""), "finit_module": syscall(313, 0, b"", 0),
    "delete_module": syscall(176, b"${hostileMarker}", 0), "kexec_load": syscall(246, 0, 0, 0, 0),
    "kexec_file_load": syscall(320, 0, 0, 0, b"", 0),
}))
`);
    expectRefused(outcome, ["init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load"]);
  });

  test("P6: keyctl, add_key, request_key are refused", async () => {
    const outcome = await probe(`
print("RESULT:", json.dumps({
    "add_key": syscall(248, b"user", b"${hostileMarker}", b"secret", 6, -2),
    "request_key": syscall(249, b"user", b"${hostileMarker}", 0, 0),
    "keyctl": syscall(250, 0, -3, 0),
}))
`);
    expectRefused(outcome, ["add_key", "request_key", "keyctl"]);
  });

  test("P7: bpf, perf_event_open, userfaultfd are refused", async () => {
    const outcome = await probe(`
attributes = ctypes.create_string_buffer(128)
print("RESULT:", json.dumps({
    "bpf": syscall(321, 0, attributes, 128),
    "perf_event_open": syscall(298, attributes, 0, -1, -1, 0),
    "userfaultfd": syscall(323, 0),
}))
`);
    expectRefused(outcome, ["bpf", "perf_event_open", "userfaultfd"]);
  });

  test("P8: setns into /proc/1/ns/* is refused", async () => {
    const outcome = await probe(`
outcome = {}
for name in ["mnt", "net", "pid", "uts", "ipc", "user", "cgroup"]:
    def inside(name=name):
        try:
            descriptor = os.open(f"/proc/1/ns/{name}", os.O_RDONLY)
        except OSError as error:
            return "open " + errno.errorcode[error.errno]
        return syscall(308, descriptor, 0)
    outcome[name] = in_child(inside)
print("RESULT:", json.dumps(outcome))
`);
    for (const [name, value] of Object.entries(outcome)) {
      // runc: PID 1 (the sandbox's init) is not dumpable, so even opening its namespaces is refused
      // (EACCES); where a descriptor opens, setns itself is refused (EPERM).
      if (backend === "docker") expect(["EPERM", "open EACCES"], name).toContain(value);
      else expect(value, name).not.toBe("ok");
    }
  });

  test("P9: sethostname, settimeofday, reboot are refused; the host keeps its name and clock", async () => {
    const outcome = await probe(`
import time
now = time.time()
timeval = (ctypes.c_long * 2)(int(now), 0)
print("RESULT:", json.dumps({
    "sethostname": syscall(170, b"${hostileMarker}", 18),
    "settimeofday": syscall(164, timeval, 0),
    "reboot": syscall(169, 0xfee1dead, 672274793, 0),
    "hostname": socket.gethostname(),
}))
`);
    expectRefused(outcome, ["sethostname", "settimeofday", "reboot"]);
    expect(outcome.hostname).toBe("sandbox");
  });

  test("P10: AF_PACKET, raw IP and AF_VSOCK sockets are refused or unsupported", async () => {
    const outcome = await probe(`
print("RESULT:", json.dumps({
    "packet": attempt(lambda: socket.socket(17, socket.SOCK_RAW, 0x0300).close()),
    "raw": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()),
    "raw6": attempt(lambda: socket.socket(socket.AF_INET6, socket.SOCK_RAW, 58).close()),
    "vsock": attempt(lambda: socket.socket(40, socket.SOCK_STREAM, 0).close()),
}))
`);
    for (const name of ["packet", "raw", "raw6"]) {
      expect(["EPERM", "EACCES", "EAFNOSUPPORT", "EPROTONOSUPPORT"], name).toContain(outcome[name]);
    }
    // Docker 20.10's default seccomp profile lets socket(AF_VSOCK) through; the sandbox's own profile
    // refuses it (packages/sandbox/src/container/seccomp-profile.ts; K1 covers the other ABIs).
    expect(["EPERM", "EACCES", "EAFNOSUPPORT"], "vsock").toContain(outcome.vsock);
  });
});
