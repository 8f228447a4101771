/**
 * PID 1 of every sandbox container: a few lines of Python that end the container at its deadline,
 * or as soon as the owner's stdin attach (the lifeline) closes, and reap orphans meanwhile.
 *
 * Being the namespace's init is the point. The kernel drops every signal a process inside the
 * container sends to its init unless init installed a handler for it (SIGKILL and SIGSTOP always
 * dropped), and init makes itself non-dumpable, so the program (same uid) can neither stop, kill,
 * ptrace nor rewrite it (/proc/1/mem). The deadline therefore holds even if the host process died.
 * Only SIGCHLD has a handler (it reaps); SIGINT is set back to the default so that it is ignored.
 * Its stdout and stderr are /dev/null from its first lines: gVisor does not honour PR_SET_DUMPABLE
 * for PID 1, so there the program can open /proc/1/fd/*; they must lead nowhere.
 */
const initSource = `import ctypes, os, select, signal, sys, time
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
null = os.open("/dev/null", os.O_RDWR)
os.dup2(null, 1)
os.dup2(null, 2)
os.close(null)
signal.signal(signal.SIGINT, signal.SIG_DFL)
def reap(*_):
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass
signal.signal(signal.SIGCHLD, reap)
deadline = time.monotonic() + int(sys.argv[1])
while True:
    left = deadline - time.monotonic()
    if left <= 0:
        break
    ready, _, _ = select.select([0], [], [], min(left, 60))
    if ready and not os.read(0, 65536):
        break
`;

/** The container's entrypoint: the init above, ending the container after `deadlineSeconds`. */
export function initCommand(deadlineSeconds: number): string[] {
  return ["python3", "-I", "-S", "-c", initSource, String(Math.max(1, Math.ceil(deadlineSeconds)))];
}
