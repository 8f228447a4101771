import type { SandboxConfig } from "../config.ts";
import { runtimeFor } from "../container/container-spec.ts";

/**
 * A seccomp filter each exec installs on itself before the real command, for runtimes that do not
 * give exec'd processes the container's seccomp profile.
 *
 * runc applies the sandbox's profile (seccomp-profile.ts) to PID 1 and to every `docker exec`, so
 * under runc commands run bare. gVisor does not: it ignores the profile unless runsc is registered
 * with `--oci-seccomp`, and even then applies it only to the container's first process, never to
 * an exec, which is where every program runs. There each exec starts with this small Python prelude:
 * it installs the profile's denials (no-new-privileges is already set, so an unprivileged process
 * may), then execs the command; filters are inherited across fork and exec and cannot be removed.
 * It refuses, with EPERM unless noted:
 * - every call of another architecture, and x32 calls (numbers with bit 30 set);
 * - unshare, setns, and clone with any CLONE_NEW* flag: no namespace, so no capabilities inside
 *   gVisor's kernel through a user namespace;
 * - clone3 (ENOSYS: glibc then uses clone, whose flags can be checked) and the io_uring calls (ENOSYS);
 * - socket(AF_VSOCK).
 * gVisor answers everything else from its own kernel. If the filter cannot be installed, the
 * command does not run (exit 126): fail closed.
 */
const guardSource = String.raw`import ctypes, os, platform, struct, sys
# audit arch, socket, unshare, setns, clone, clone3, io_uring_setup/enter/register
tables = {"x86_64": (0xC000003E, 41, 272, 308, 56, 435, (425, 426, 427)),
          "aarch64": (0xC00000B7, 198, 97, 268, 220, 435, (425, 426, 427))}
table = tables.get(platform.machine())
if table is None:
    sys.stderr.write("codeaction: no seccomp filter for the architecture %s\n" % platform.machine())
    sys.exit(126)
audit_arch, nr_socket, nr_unshare, nr_setns, nr_clone, nr_clone3, nr_uring = table
LD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
# (label, code, jump if true, jump if false, k): jumps name a later label ("" = the next instruction).
steps = [("", LD, "", "", 4), ("", JEQ, "", "eperm", audit_arch), ("", LD, "", "", 0),
         ("", JGE, "eperm", "", 0x40000000), ("", JEQ, "eperm", "", nr_unshare),
         ("", JEQ, "eperm", "", nr_setns), ("", JEQ, "enosys", "", nr_clone3)]
steps += [("", JEQ, "enosys", "", number) for number in nr_uring]
steps += [("", JEQ, "socket", "", nr_socket), ("", JEQ, "clone", "", nr_clone),
          ("", RET, "", "", ALLOW),
          ("socket", LD, "", "", 16), ("", JEQ, "eperm", "", 40), ("", RET, "", "", ALLOW),
          ("clone", LD, "", "", 16), ("", JSET, "eperm", "", 0x7E020000), ("", RET, "", "", ALLOW),
          ("eperm", RET, "", "", EPERM), ("enosys", RET, "", "", ENOSYS)]
where = {label: index for index, (label, *_) in enumerate(steps) if label}
def offset(index, label):
    return where[label] - index - 1 if label else 0
code = b"".join(struct.pack("HBBI", op, offset(i, jt), offset(i, jf), k)
                for i, (_, op, jt, jf, k) in enumerate(steps))
buffer = ctypes.create_string_buffer(code)
class Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fprog = Program(len(steps), ctypes.cast(buffer, ctypes.c_void_p))
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
    sys.stderr.write("codeaction: could not install the sandbox's seccomp filter: %s\n" % os.strerror(ctypes.get_errno()))
    sys.exit(126)
try:
    os.execvp(sys.argv[1], sys.argv[1:])
except OSError as error:
    sys.stderr.write("codeaction: cannot run %s: %s\n" % (sys.argv[1], error.strerror))
    sys.exit(127 if isinstance(error, FileNotFoundError) else 126)
`;

/** Whether a container's execs need the guard: everywhere but runc, which applies the profile itself. */
export function execsNeedGuard(config: SandboxConfig): boolean {
  const runtime = runtimeFor(config);
  return runtime !== undefined && runtime !== "runc";
}

/** `argv`, run behind the guard. */
export function guardedArgv(argv: string[]): string[] {
  return ["python3", "-I", "-S", "-c", guardSource, ...argv];
}
