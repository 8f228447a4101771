import { describe, expect, test } from "vitest";
import { backends, probeOutcomes, suiteManager } from "../support/harness.ts";

// Issue 18, findings 1 and 6: system calls around the seccomp profile. K1 and K2 reached AF_VSOCK
// under runc past a filter stacked at exec time (other ABIs, io_uring); K3 held capabilities inside
// gVisor through a user namespace. The sandbox's own profile (packages/sandbox/src/container/seccomp-profile.ts),
// applied at creation, refuses all three under runc; under gVisor each exec installs the same
// refusals first (packages/sandbox/src/process/syscall-guard.ts: runsc --oci-seccomp is not used, see
// docs/security.md).

type Outcomes = Record<string, string>;

describe.each(backends)("system calls (backend %s)", (backend) => {
  const manager = suiteManager(backend);

  const probe = (body: string): Promise<Outcomes> => probeOutcomes<Outcomes>(manager(), body);

  test("K1: no AF_VSOCK socket through the i386 (int 0x80) or x32 system-call ABI", {
    timeout: 180_000,
  }, async () => {
    const outcome = await probe(`
import mmap
def i386_vsock():
    # push rbx; mov eax, 359 (i386 socket); mov ebx, 40 (AF_VSOCK); mov ecx, 1; xor edx, edx;
    # int 0x80; pop rbx; ret: run from an executable anonymous mapping, as any program could.
    code = bytes.fromhex("53b867010000bb28000000b90100000031d2cd805bc3")
    page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    result = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))()
    return "ok" if result >= 0 else errno.errorcode.get(-result, str(-result))
print("RESULT:", json.dumps({
    "i386": in_child(i386_vsock),
    # socket() under the x32 ABI: its number with bit 30 set, under the x86_64 architecture.
    "x32": in_child(lambda: syscall(0x40000000 | 41, 40, 1, 0)),
    "native": attempt(lambda: socket.socket(40, socket.SOCK_STREAM, 0).close()),
}))
`);
    // i386: the profile refuses the ABI (runc kills the thread: SIGSYS); a kernel without 32-bit
    // entry (this VM's) faults the int 0x80 first (SIGSEGV). Either way no socket.
    expect(["EPERM", "ENOSYS", "signal SIGSYS", "signal SIGSEGV"], "i386").toContain(outcome.i386);
    // x32: refused by the profile itself (Docker 20.10's profile let the kernel answer ENOSYS here).
    expect(["EPERM", "signal SIGSYS"], "x32").toContain(outcome.x32);
    // The native call: refused by the profile under runc; gVisor has no vsock at all.
    expect(backend === "docker" ? ["EPERM"] : ["EPERM", "EAFNOSUPPORT"], "native").toContain(outcome.native);
  });

  test("K2: io_uring_setup, io_uring_enter and io_uring_register are refused", {
    timeout: 180_000,
  }, async () => {
    const outcome = await probe(`
parameters = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
print("RESULT:", json.dumps({
    "setup": in_child(lambda: syscall(425, 8, parameters)),
    "enter": syscall(426, -1, 1, 0, 0, 0, 0),
    "register": syscall(427, -1, 0, 0, 0),
}))
`);
    // Refused by the profile before the kernel looks at the arguments (which would give EBADF/EINVAL).
    for (const name of ["setup", "enter", "register"])
      expect(["ENOSYS", "EPERM"], name).toContain(outcome[name]);
  });

  test("K3: after unshare and clone(CLONE_NEWUSER) attempts the program still has no capabilities", {
    timeout: 180_000,
  }, async () => {
    const outcome = await probe(`
def capabilities():
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
    return status["CapEff"].strip()

def privileged_sockets():
    return {
        "raw": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()),
        "packet": attempt(lambda: socket.socket(17, socket.SOCK_RAW, 0x0300).close()),
    }

def after_unshare(flags):
    def inside():
        return {"unshare": syscall(272, flags), "capEff": capabilities(), **privileged_sockets()}
    return in_child(inside)

def after_clone():
    read, write = os.pipe()
    pid = libc.syscall(ctypes.c_long(56), ctypes.c_long(0x10000000 | 17), ctypes.c_long(0), ctypes.c_long(0),
                       ctypes.c_long(0), ctypes.c_long(0))
    if pid == 0:
        os.write(write, json.dumps({"clone": "ok", "capEff": capabilities(), **privileged_sockets()}).encode())
        os._exit(0)
    os.close(write)
    if pid < 0:
        os.close(read)
        return {"clone": errno.errorcode.get(ctypes.get_errno(), "?"), "capEff": capabilities(), **privileged_sockets()}
    os.waitpid(pid, 0)
    data = os.read(read, 65536)
    os.close(read)
    return json.loads(data)

print("RESULT:", json.dumps({
    "user": after_unshare(0x10000000),
    "userNetwork": after_unshare(0x10000000 | 0x40000000),
    "userMount": after_unshare(0x10000000 | 0x00020000),
    "clone": after_clone(),
}))
`);
    const results = outcome as unknown as Record<string, Record<string, string>>;
    for (const [attemptName, result] of Object.entries(results)) {
      expect(result.unshare ?? result.clone, attemptName).toBe("EPERM");
      expect(result.capEff, attemptName).toBe("0000000000000000");
      expect(["EPERM", "EACCES"], `${attemptName} raw`).toContain(result.raw);
      expect(["EPERM", "EACCES", "EAFNOSUPPORT"], `${attemptName} packet`).toContain(result.packet);
    }
  });
});
