/**
 * A second seccomp filter, stacked on Docker's default profile, for every command a session runs.
 *
 * Docker 20.10's default profile lets `socket(AF_VSOCK, ...)` through, and on a virtual machine
 * with vsock that is a way to the hypervisor host that `network: "none"` does not close. Replacing
 * Docker's profile with one of our own would lose what it already refuses, so instead each exec
 * starts with this small Python prelude: it installs a filter that refuses AF_VSOCK sockets with
 * EAFNOSUPPORT (no-new-privileges is already set, so an unprivileged process may do this), then
 * execs the real command. Filters are inherited across fork and exec and cannot be removed.
 * If the filter cannot be installed, the command does not run (exit 126): fail closed.
 */
const guardSource = String.raw`import ctypes, os, platform, struct, sys
arches = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}
arch = arches.get(platform.machine())
if arch is not None:
    audit_arch, nr_socket = arch
    ld, jeq, ret = 0x20, 0x15, 0x06
    program = [
        (ld, 0, 0, 4), (jeq, 0, 6, audit_arch), (ld, 0, 0, 0),
        (jeq, 1, 0, nr_socket), (jeq, 0, 3, nr_socket | 0x40000000),
        (ld, 0, 0, 16), (jeq, 0, 1, 40),
        (ret, 0, 0, 0x00050000 | 97), (ret, 0, 0, 0x7FFF0000),
    ]
    code = b"".join(struct.pack("HBBI", *step) for step in program)
    buffer = ctypes.create_string_buffer(code)
    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    fprog = Program(len(program), ctypes.cast(buffer, ctypes.c_void_p))
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

/** `argv`, run behind the guard. */
export function guardedArgv(argv: string[]): string[] {
  return ["python3", "-I", "-S", "-c", guardSource, ...argv];
}
