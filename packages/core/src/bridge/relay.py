"""The codeaction bridge relay: runs one program in the container and carries its tool calls.

The host starts it as `python3 -I -S -c <this source>` (one exec with stdin attached) and speaks
length-prefixed frames with it on stdin and stdout; see docs/bridge-protocol.md. The program runs
as a child in its own session. It asks for tools by writing request files in the bridge folder and
ringing a doorbell (fd 3); the relay forwards each request to the host, writes the host's answer as
a response file and rings the program's reply doorbell (fd 4). The relay trusts nothing the
program writes: request ids follow a strict grammar, request files are opened without following
links or blocking, and their size is checked before they are read.

The relay reaches the container as one source: python-sources.ts joins this module (its start and
constants), relay_io (/proc, request files, the program's output streams), relay_channels (the
host's frames, the program's doorbells), relay_steps (the bridge folder, the go line, a kept
interpreter's step ends) and relay_loop (the program's processes and the relay's loop), in that
order, drops their imports of one another (`from relay... import` lines), and puts
bootstrap.py in place of the BOOTSTRAP marker. Each module stands alone: it imports what it uses,
and importing it starts nothing (the start below runs only as the relay's main program), so each is
linted (pyflakes) and imported on its own by the tests.
"""

# The program's interpreter starts first, before this relay's own imports (json, re, selectors, ...):
# they take longer than the interpreter's start-up, and on the cold path both are on the critical
# path. Only what starting it needs comes before (built-in modules, and ctypes for the dumpable flag).
import fcntl
import os
import signal
import sys

# The program's interpreter runs bootstrap.py (beside this file): python-sources.ts puts its
# source in place of the marker below, as a string literal, when it loads this relay.
BOOTSTRAP = "@@CODEACTION_BOOTSTRAP@@"
# The relay's arguments: modules the program's interpreter imports while it waits for the program
# (codeAction.preimport); the host checked them, and anything but a dotted Python name is dropped.
PREIMPORT = [
    name
    for name in sys.argv[1:17]
    if len(name) <= 200 and all(part.isascii() and part.isidentifier() for part in name.split("."))
]


def set_not_dumpable():
    """The program runs as our uid: this keeps it out of /proc/<relay>/fd and away from ptrace."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except Exception:
        pass


def start_interpreter():
    """Starts the program's interpreter (BOOTSTRAP) in its own session, waiting for the go line.

    Its descriptors are 0 (the go pipe, /dev/null once it has the line), 1 and 2 (its stdout and
    stderr pipes), 3 (the request doorbell), 4 (the reply doorbell) and 5 (its steps' ends, closed
    at once unless the program is run as a step), and nothing else.
    """
    go_read, go_write = os.pipe()
    steps_read, steps_write = os.pipe()
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    request_read, request_write = os.pipe()
    reply_read, reply_write = os.pipe()
    os.set_blocking(reply_write, False)
    argv = [sys.executable, *ISOLATION, "-B", "-u", "-X", "utf8", "-c", BOOTSTRAP, *PREIMPORT]
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            high = [
                fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
                for fd in (go_read, out_write, err_write, request_write, reply_read, steps_write)
            ]
            for target, fd in enumerate(high):
                os.dup2(fd, target)
            # Descriptors the relay itself inherited without close-on-exec must not reach the program.
            for name in os.listdir("/proc/self/fd"):
                if int(name) > 5:
                    try:
                        os.close(int(name))
                    except OSError:
                        pass
            os.execve(sys.executable, argv, program_environment())
        finally:
            os._exit(127)
    for fd in (go_read, out_write, err_write, request_write, reply_read, steps_write):
        os.close(fd)
    return {
        "pid": pid,
        "go": go_write,
        "out": out_read,
        "err": err_read,
        "request": request_read,
        "reply": reply_write,
        "steps": steps_read,
    }


# What -I does but ignoring every PYTHON* variable: -s (no user site) and -P (no script folder on
# sys.path; Python 3.11 and later). The environment below has no PYTHON* variable but PYTHONHASHSEED,
# fixed so that str hashes, and with them set orders, repeat from run to run (a resumed or replayed
# program makes the same calls).
ISOLATION = ["-s", "-P"] if sys.version_info >= (3, 11) else ["-s"]


def program_environment():
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    environment["PYTHONHASHSEED"] = "0"
    return environment


# The interpreter started as the relay loads, before the imports below and the other modules' own.
WAITING_INTERPRETER = None
if __name__ == "__main__":
    set_not_dumpable()
    WAITING_INTERPRETER = start_interpreter()

import re  # noqa: E402 (after the interpreter's start, see above)
import struct  # noqa: E402

HEADER = struct.Struct(">cI")
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
CHUNK_BYTES = 65536
MAX_HOST_FRAME_BYTES = 256 * 1024 * 1024
MAX_DOORBELL_LINE_BYTES = 128
MAX_PENDING_BELL_BYTES = 1024 * 1024
MAX_NOTICES = 50
# Requests forwarded to the host and not yet answered; at this many the relay stops reading the
# doorbell, so a program that rings faster than the host answers waits instead of queueing.
MAX_OUTSTANDING = 16
DRAIN_SECONDS = 2.0
REQUEST_FD = 3
REPLY_FD = 4
# A kept interpreter's step end (one JSON line on its fd 5: the exit status and what __main__
# holds): the longest line read, and the longest summary passed on to the host.
MAX_STEP_LINE_BYTES = 64 * 1024
MAX_SUMMARY_CHARACTERS = 8000
