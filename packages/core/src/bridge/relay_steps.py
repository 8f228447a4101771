"""Part of the bridge relay (relay.py says how the modules are joined): the bridge folder, the go line
that starts a program in the waiting interpreter, and a kept interpreter's step ends.

A program run as a step (the start frame's "keep") leaves its interpreter alive: the bootstrap
writes one line on the interpreter's fd 5 when the program ends, and waits for the next go line,
whose program (program-<n>.py) runs in the same __main__."""

import itertools
import json
import os
import stat

from relay import CHUNK_BYTES, MAX_STEP_LINE_BYTES, MAX_SUMMARY_CHARACTERS, REPLY_FD, REQUEST_FD
from relay_io import write_file

DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def prepare_bridge(bridge, module, program):
    """Makes the bridge folder (requests, responses, lib with the tools module, program.py) and
    returns it, the requests and the responses folders, opened."""
    os.makedirs(bridge, mode=0o700, exist_ok=True)
    bridge_fd = os.open(bridge, DIRECTORY_FLAGS)
    for name in ("requests", "responses", "lib"):
        os.mkdir(name, mode=0o700, dir_fd=bridge_fd)
    requests_fd = os.open("requests", DIRECTORY_FLAGS, dir_fd=bridge_fd)
    responses_fd = os.open("responses", DIRECTORY_FLAGS, dir_fd=bridge_fd)
    lib_fd = os.open("lib", DIRECTORY_FLAGS, dir_fd=bridge_fd)
    write_file(lib_fd, "codeaction_tools.py", module.encode())
    write_file(bridge_fd, "program.py", program.encode())
    os.close(lib_fd)
    return bridge_fd, requests_fd, responses_fd


def send_go(go_fd, bridge, workdir, keep):
    """Tells the waiting interpreter what to run, and where (its go line). Without `keep` its go pipe
    is closed after; kept, it stays open (non-blocking) for the next steps' go lines."""
    go = {
        "lib": os.path.join(bridge, "lib"),
        "program": os.path.join(bridge, "program.py"),
        "workDirectory": workdir,
        "keep": keep,
        "environment": {
            # The PYTHON* variables the interpreter was started without (see ISOLATION): the program
            # sees them, as under -I, and they change nothing in its own interpreter.
            **{key: value for key, value in os.environ.items() if key.startswith("PYTHON")},
            "CODEACTION_BRIDGE_DIR": bridge,
            "CODEACTION_REQUEST_FD": str(REQUEST_FD),
            "CODEACTION_REPLY_FD": str(REPLY_FD),
        },
    }
    try:
        view = memoryview(json.dumps(go).encode() + b"\n")
        while view:
            view = view[os.write(go_fd, view) :]
    except OSError:
        pass  # the interpreter is gone: its exit is reported like any program's
    if keep:
        os.set_blocking(go_fd, False)
    else:
        os.close(go_fd)


def send_next_program(go_fd, bridge_fd, bridge, step, program):
    """The next step's program, written as program-<step>.py, and its go line. False when the
    interpreter did not take its earlier go lines (its go pipe is full): it is not waiting."""
    name = f"program-{step}.py"
    write_file(bridge_fd, name, program.encode())
    line = json.dumps({"program": os.path.join(bridge, name)}).encode() + b"\n"
    try:
        return os.write(go_fd, line) == len(line)
    except BlockingIOError:
        return False
    except OSError:
        return True  # the interpreter is gone: its exit is reported like any program's


def count_output_entries(output_directory):
    """Entries in the output folder (at most 2; 0 when it is absent), or None when it is not a plain folder.

    Only a hint: at 0 the host skips reading the folder; otherwise it reads it as hostile, as always.
    """
    if output_directory is None:
        return None
    try:
        if not stat.S_ISDIR(os.lstat(output_directory).st_mode):
            return None
        with os.scandir(output_directory) as entries:
            return sum(1 for _ in itertools.islice(entries, 2))
    except FileNotFoundError:
        return 0
    except OSError:
        return None


class StepEnds:
    """The kept interpreter's fd 5: one JSON line when a step's program ends. The line comes from the
    program's process, so it is bounded, and a line that is not a step end still ends the step."""

    def __init__(self, fd):
        self.fd = fd
        self.buffer = bytearray()
        self.skipping = False
        # At the pipe's end (the interpreter is gone): the relay stops watching it.
        self.closed = False

    def read(self):
        """(status, summary) when a step ended; None until a whole line is read (or at the pipe's end)."""
        try:
            data = os.read(self.fd, CHUNK_BYTES)
        except OSError:
            data = b""
        if not data:
            self.closed = True
            return None
        self.buffer += data
        # Every whole line read: the end of a line too long to keep is skipped, the next one ends the step.
        while True:
            newline = self.buffer.find(b"\n")
            if newline < 0:
                break
            line = bytes(self.buffer[:newline])
            del self.buffer[: newline + 1]
            if self.skipping:
                self.skipping = False
                continue
            return parse_step_end(line)
        if len(self.buffer) <= MAX_STEP_LINE_BYTES:
            return None
        self.buffer.clear()
        self.skipping = True
        return 1, ""


def parse_step_end(line):
    """A step end line's (status, summary); a malformed one is status 1 with no summary."""
    try:
        value = json.loads(line)
        status = value["status"]
        summary = value["summary"]
        if not isinstance(status, int) or isinstance(status, bool) or not 0 <= status <= 255:
            return 1, ""
        return status, summary[:MAX_SUMMARY_CHARACTERS] if isinstance(summary, str) else ""
    except (ValueError, KeyError, TypeError):
        return 1, ""
