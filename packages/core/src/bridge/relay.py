"""The codeaction bridge relay: runs one program in the container and carries its tool calls.

The host starts it as `python3 -I -S -c <this source>` (one exec with stdin attached) and speaks
length-prefixed frames with it on stdin and stdout; see docs/bridge-protocol.md. The program runs
as a child in its own session. It asks for tools by writing request files in the bridge folder and
ringing a doorbell (fd 3); the relay forwards each request to the host, writes the host's answer as
a response file and rings the program's reply doorbell (fd 4). The relay trusts nothing the
program writes: request ids follow a strict grammar, request files are opened without following
links or blocking, and their size is checked before they are read.
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
    stderr pipes), 3 (the request doorbell) and 4 (the reply doorbell), and nothing else.
    """
    go_read, go_write = os.pipe()
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
                for fd in (go_read, out_write, err_write, request_write, reply_read)
            ]
            for target, fd in enumerate(high):
                os.dup2(fd, target)
            # Descriptors the relay itself inherited without close-on-exec must not reach the program.
            for name in os.listdir("/proc/self/fd"):
                if int(name) > 4:
                    try:
                        os.close(int(name))
                    except OSError:
                        pass
            os.execve(sys.executable, argv, program_environment())
        finally:
            os._exit(127)
    for fd in (go_read, out_write, err_write, request_write, reply_read):
        os.close(fd)
    return {"pid": pid, "go": go_write, "out": out_read, "err": err_read, "request": request_read, "reply": reply_write}


# What -I does but ignoring every PYTHON* variable: -s (no user site) and -P (no script folder on
# sys.path; Python 3.11 and later). The environment below has no PYTHON* variable but PYTHONHASHSEED,
# fixed so that str hashes, and with them set orders, repeat from run to run (a resumed or replayed
# program makes the same calls).
ISOLATION = ["-s", "-P"] if sys.version_info >= (3, 11) else ["-s"]


def program_environment():
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    environment["PYTHONHASHSEED"] = "0"
    return environment


set_not_dumpable()
WAITING_INTERPRETER = start_interpreter()

import itertools  # noqa: E402 (after the interpreter's start, see above)
import json  # noqa: E402
import re  # noqa: E402
import select  # noqa: E402
import selectors  # noqa: E402
import stat  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402

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



def process_start_time(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            data = file.read()
        return data[data.rindex(b")") + 2 :].split()[19]
    except (OSError, ValueError, IndexError):
        return None


def process_owner_and_state(pid):
    try:
        with open(f"/proc/{pid}/status", "rb") as file:
            uid = state = None
            for line in file:
                if line.startswith(b"State:"):
                    state = line.split()[1]
                elif line.startswith(b"Uid:"):
                    uid = int(line.split()[1])
            return uid, state
    except (OSError, ValueError, IndexError):
        return None, None


def list_pids():
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def read_request_file(requests_fd, request_id, max_bytes):
    """Reads and removes `<id>.json` from the requests folder: (body, None), or (None, why it is refused).

    Opened without following links or blocking; its size is checked before and while it is read.
    """
    name = request_id + ".json"
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=requests_fd)
    except FileNotFoundError:
        return None, "its request file does not exist"
    except OSError as error:
        return None, f"its request file could not be opened ({os.strerror(error.errno)})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "its request file is not a regular file"
        if info.st_size > max_bytes:
            return None, f"the request is larger than {max_bytes} bytes (it is {info.st_size} bytes; the limit is codeAction.maxRequestBytes)"
        chunks = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, min(CHUNK_BYTES, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            return None, f"the request is larger than {max_bytes} bytes (the limit is codeAction.maxRequestBytes)"
    except OSError as error:
        return None, f"its request file could not be read ({os.strerror(error.errno)})"
    finally:
        os.close(fd)
    try:
        os.unlink(name, dir_fd=requests_fd)
    except OSError:
        pass
    return b"".join(chunks), None


def kill_leftover_processes(protected):
    """Kills every process of our uid but PID 1, the relay and the `protected` ones (pid, start time)
    that were there before the program: what the program started outside its process group."""
    uid = os.getuid()
    for _ in range(20):
        found = False
        for pid in list_pids():
            if pid in (1, os.getpid()) or (pid, process_start_time(pid)) in protected:
                continue
            owner, state = process_owner_and_state(pid)
            if owner != uid or state in (b"Z", b"X", None):
                continue
            try:
                os.kill(pid, signal.SIGKILL)
                found = True
            except OSError:
                pass
        if not found:
            return
        time.sleep(0.01)


def write_file(dir_fd, name, data):
    """Writes `name` inside `dir_fd` atomically: a fresh temp name, then a rename over it."""
    temporary = f".{name}.{os.urandom(6).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, 0o600, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    try:
        os.rename(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        os.unlink(temporary, dir_fd=dir_fd)
        raise


class Stream:
    """One of the program's output pipes: forwards a head live, keeps a tail, counts the rest.

    The tail is a ring of fixed size and each read lands in one buffer the relay reuses: a program
    that prints gigabytes makes the relay allocate nothing per read (allocating and freeing 64 KiB
    blocks made the C allocator hand memory back and take it again on every read)."""

    def __init__(self, kind, name, fd, limit):
        self.kind = kind
        self.name = name
        self.fd = fd
        self.tail_limit = min(CHUNK_BYTES, limit // 4)
        self.head_limit = limit - self.tail_limit
        self.forwarded = 0
        self.total = 0
        # The tail's ring: `tail_length` bytes ending before `tail_end` (wrapping around).
        self.tail = bytearray(self.tail_limit)
        self.tail_length = 0
        self.tail_end = 0
        self.tail_starts_line = True
        self.open = True
        # Where the last line starting with RESULT: begins (stdout's answer), and the last newline
        # forwarded in the head: together they say whether the cap cut that line away.
        self.carry = b"\n"
        self.last_result = None
        self.head_last_newline = -1

    def take(self, buffer, count):
        """Counts one read (the first `count` bytes of `buffer`) and keeps its tail; returns the part
        to forward live (the head, maybe empty)."""
        start = self.total
        self.total += count
        # The last RESULT: line in this read, else one that straddles the previous read: the carry
        # (the last 7 bytes seen, or a newline at the start) plus this read's first 7 bytes. The
        # pattern is longer than the carry, so no line is found twice, and no read is copied whole.
        found = buffer.rfind(b"\nRESULT:", 0, count)
        if found >= 0:
            self.last_result = start + found + 1
        else:
            found = (self.carry + buffer[: min(7, count)]).rfind(b"\nRESULT:")
            if found >= 0:
                self.last_result = start - len(self.carry) + found + 1
        self.carry = (self.carry + buffer[max(0, count - 7) : count])[-7:]
        head = b""
        room = min(self.head_limit - self.forwarded, count)
        if room > 0:
            head = bytes(buffer[:room])
            newline = head.rfind(b"\n")
            if newline >= 0:
                self.head_last_newline = self.forwarded + newline
            self.forwarded += room
        if count > max(room, 0):
            with memoryview(buffer) as view:
                self.keep_tail(view[max(room, 0) : count])
        return head

    def keep_tail(self, part):
        """Adds `part` to the tail's ring, the oldest bytes making room."""
        size = len(part)
        limit = self.tail_limit
        overflow = self.tail_length + size - limit
        if overflow > 0:
            # Whether the first byte kept starts a line: the byte before it is a newline.
            if overflow <= self.tail_length:
                before = self.tail[(self.tail_end - self.tail_length + overflow - 1) % limit]
            else:
                before = part[overflow - self.tail_length - 1]
            self.tail_starts_line = before == 10
        if limit == 0:
            return
        kept = part[max(0, size - limit) :]
        first = min(len(kept), limit - self.tail_end)
        self.tail[self.tail_end : self.tail_end + first] = kept[:first]
        self.tail[: len(kept) - first] = kept[first:]
        self.tail_end = (self.tail_end + len(kept)) % limit
        self.tail_length = min(limit, self.tail_length + size)

    def tail_bytes(self):
        """The tail's bytes, oldest first."""
        begin = self.tail_end - self.tail_length
        if begin >= 0:
            return bytes(self.tail[begin : self.tail_end])
        return bytes(self.tail[begin:]) + bytes(self.tail[: self.tail_end])

    def final_tail(self):
        """The tail frame's header and bytes, or None when there is nothing to send after the head."""
        dropped = self.total - self.forwarded - self.tail_length
        tail = self.tail_bytes()
        if dropped > 0 and not self.tail_starts_line:
            # The kept tail starts inside a line whose beginning was dropped: begin at the next line.
            newline = tail.find(b"\n")
            tail = tail[newline + 1 :] if newline >= 0 else b""
        if not tail and dropped <= 0:
            return None
        header = {"stream": self.name, "dropped": dropped}
        if dropped > 0 and self.result_lost(self.total - len(tail)):
            header["resultLost"] = True
        return header, tail

    def result_lost(self, tail_start):
        """Whether the last RESULT: line was cut (wholly or partly) out of what the host receives."""
        last = self.last_result
        if last is None or last >= tail_start:
            return False
        return not (last < self.forwarded and self.head_last_newline >= last)


class FrameTooLarge(Exception):
    """A frame from the host over MAX_HOST_FRAME_BYTES: the relay ends (a fatal frame)."""


class HostChannel:
    """The relay's frames to and from the host, on stdout and stdin (docs/bridge-protocol.md). Frames
    the host sends while the relay waits to write are kept, unprocessed, for `next_frame`."""

    def __init__(self, on_gone):
        self.on_gone = on_gone
        self.buffer = bytearray()
        self.gone = False
        self.notices = 0

    def send(self, kind, payload=b""):
        if self.gone:
            return
        view = memoryview(HEADER.pack(kind, len(payload)) + payload)
        try:
            while view:
                try:
                    written = os.write(1, view)
                except BlockingIOError:
                    self.wait_for_host()
                    continue
                view = view[written:]
        except OSError:
            self.gone = True

    def wait_for_host(self):
        """The host is not reading (it waits for its answers to drain): read them meanwhile, unprocessed."""
        readable, _, _ = select.select([0], [1], [], 1.0)
        if readable:
            self.receive()

    def send_json(self, kind, value):
        self.send(kind, json.dumps(value, separators=(",", ":")).encode())

    def send_with_header(self, kind, header, body):
        self.send(kind, json.dumps(header, separators=(",", ":")).encode() + b"\n" + body)

    def notice(self, message):
        self.notices += 1
        if self.notices <= MAX_NOTICES:
            self.send_json(b"N", {"message": message})

    def receive(self):
        try:
            data = os.read(0, CHUNK_BYTES)
        except OSError:
            data = b""
        if not data:
            self.on_gone()  # exits
        self.buffer += data

    def next_frame(self):
        """The next whole frame as (kind, payload), or None until one is complete."""
        if len(self.buffer) < HEADER.size:
            return None
        kind, length = HEADER.unpack_from(self.buffer)
        if length > MAX_HOST_FRAME_BYTES:
            raise FrameTooLarge(f"a frame from the host is too large ({length} bytes)")
        if len(self.buffer) < HEADER.size + length:
            return None
        payload = bytes(self.buffer[HEADER.size : HEADER.size + length])
        del self.buffer[: HEADER.size + length]
        return kind, payload


class ReplyBell:
    """The program's reply doorbell (its fd 4): the id of each answered request, one a line. A write
    never blocks the relay; what the pipe does not take waits, bounded, until the program reads."""

    def __init__(self, selector, notice):
        self.selector = selector
        self.notice = notice
        self.fd = None
        self.buffer = bytearray()
        self.waiting = False

    def ring(self, request_id):
        if self.fd is None:
            return
        if len(self.buffer) > MAX_PENDING_BELL_BYTES:
            self.notice("the program does not read its reply doorbell; a reply was dropped")
            return
        self.buffer += request_id.encode() + b"\n"
        self.flush()

    def flush(self):
        try:
            while self.buffer:
                written = os.write(self.fd, self.buffer)
                del self.buffer[:written]
        except BlockingIOError:
            pass
        except OSError:
            self.buffer.clear()
            self.close()
            return
        waiting = bool(self.buffer)
        if waiting != self.waiting:
            if waiting:
                self.selector.register(self.fd, selectors.EVENT_WRITE, "bell")
            else:
                self.selector.unregister(self.fd)
            self.waiting = waiting

    def close(self):
        if self.fd is not None:
            if self.waiting:
                self.selector.unregister(self.fd)
                self.waiting = False
            os.close(self.fd)
            self.fd = None


class RequestDoorbell:
    """The program's request doorbell (its fd 3): one request id a line. Each valid ring sends the
    request file to the host; while MAX_OUTSTANDING requests wait for their answers the doorbell is
    not read, so a program that rings faster than the host answers waits instead of queueing."""

    def __init__(self, selector, host):
        self.selector = selector
        self.host = host
        self.fd = None
        self.buffer = bytearray()
        self.skipping = False
        self.paused = False
        self.accepting = False
        self.outstanding = set()
        self.requests = 0
        # Set by open(): the requests folder and the request size cap.
        self.requests_fd = None
        self.max_request_bytes = 0

    def open(self, fd, requests_fd, max_request_bytes):
        self.fd = fd
        self.requests_fd = requests_fd
        self.max_request_bytes = max_request_bytes
        self.accepting = True
        self.selector.register(fd, selectors.EVENT_READ, "doorbell")

    def read(self):
        try:
            data = os.read(self.fd, CHUNK_BYTES)
        except OSError:
            data = b""
        if not data:
            self.close()
            return
        self.buffer += data
        self.drain()

    def drain(self):
        """Handles whole doorbell lines while fewer than MAX_OUTSTANDING requests wait for the host."""
        while len(self.outstanding) < MAX_OUTSTANDING:
            newline = self.buffer.find(b"\n")
            if newline < 0:
                break
            line = bytes(self.buffer[:newline])
            del self.buffer[: newline + 1]
            if self.skipping:
                # The end of a line that was too long: drop it with the rest of that line.
                self.skipping = False
            elif self.accepting:
                self.on_request(line)
        if len(self.buffer) > MAX_DOORBELL_LINE_BYTES and self.buffer.find(b"\n") < 0:
            self.host.notice("a doorbell line was too long; it was ignored")
            self.buffer.clear()
            self.skipping = True
        if len(self.outstanding) >= MAX_OUTSTANDING:
            self.pause()
        else:
            self.resume()

    def on_request(self, line):
        try:
            request_id = line.decode("ascii")
        except UnicodeDecodeError:
            request_id = ""
        if len(line) > MAX_DOORBELL_LINE_BYTES or not ID_PATTERN.fullmatch(request_id):
            self.host.notice(f"ignored a request with an invalid id: {line[:80]!r}")
            return
        if request_id in self.outstanding:
            self.host.notice(f"ignored a repeated ring for {request_id}, which is still being answered")
            return
        self.requests += 1
        self.outstanding.add(request_id)
        body, refusal = read_request_file(self.requests_fd, request_id, self.max_request_bytes)
        if refusal is not None:
            self.host.send_with_header(b"Q", {"id": request_id, "refused": refusal}, b"")
            return
        self.host.send_with_header(b"Q", {"id": request_id}, body)

    def settle(self, request_id):
        """The host answered `request_id`: whether the answer is to be handed to the program."""
        self.outstanding.discard(request_id)
        return self.accepting and ID_PATTERN.fullmatch(request_id) is not None

    def pause(self):
        if not self.paused and self.fd is not None:
            self.selector.unregister(self.fd)
            self.paused = True

    def resume(self):
        if self.paused and self.fd is not None:
            self.selector.register(self.fd, selectors.EVENT_READ, "doorbell")
            self.paused = False

    def close(self):
        if self.fd is not None:
            if not self.paused:
                self.selector.unregister(self.fd)
            os.close(self.fd)
            self.fd = None


class ProgramProcesses:
    """The program's processes: the interpreter started ahead, the running program, and the ending:
    what is killed (its process group, and with killStragglers whatever else it started) and how it
    exited."""

    def __init__(self):
        self.waiting = None
        self.child_pid = None
        self.child_status = None
        self.kill_requested = False
        self.kill_stragglers = False
        # The processes (pid, start time) that were there before the program: never killed.
        self.protected = set()

    def start_ahead(self):
        """The interpreter started when the relay loaded (WAITING_INTERPRETER)."""
        self.waiting = WAITING_INTERPRETER

    def take_interpreter(self):
        """The interpreter started ahead when it still waits, else a new one; the relay's from now."""
        waiting = self.waiting if self.waiting_alive() else start_interpreter()
        self.waiting = None
        return waiting

    def waiting_alive(self):
        """Whether the interpreter started ahead still waits; a dead one is reaped and its pipes closed."""
        if self.waiting is None:
            return False
        try:
            pid, _status = os.waitpid(self.waiting["pid"], os.WNOHANG)
        except ChildProcessError:
            pid = self.waiting["pid"]
        if pid == 0:
            return True
        for key in ("go", "out", "err", "request", "reply"):
            os.close(self.waiting[key])
        self.waiting = None
        return False

    def protect_others(self, pid):
        self.protected = {(other, process_start_time(other)) for other in list_pids() if other != pid}

    def kill_everything(self):
        if self.waiting is not None:
            try:
                os.killpg(self.waiting["pid"], signal.SIGKILL)
            except OSError:
                pass
        if self.child_pid is not None:
            try:
                os.killpg(self.child_pid, signal.SIGKILL)
            except OSError:
                pass
        if not self.kill_stragglers:
            return
        kill_leftover_processes(self.protected)

    def reap(self):
        """Whether the program exited just now (its status is kept)."""
        if self.child_pid is None or self.child_status is not None:
            return False
        try:
            pid, status = os.waitpid(self.child_pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = self.child_pid, 0
        if pid != self.child_pid:
            return False
        self.child_status = status
        return True

    def exit_code_and_signal(self):
        status = self.child_status
        signal_number = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + (signal_number or 0)
        return exit_code, signal_number


def prepare_bridge(bridge, module, program):
    """Makes the bridge folder (requests, responses, lib with the tools module, program.py) and
    returns the requests and responses folders, opened."""
    os.makedirs(bridge, mode=0o700, exist_ok=True)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    bridge_fd = os.open(bridge, flags)
    for name in ("requests", "responses", "lib"):
        os.mkdir(name, mode=0o700, dir_fd=bridge_fd)
    requests_fd = os.open("requests", flags, dir_fd=bridge_fd)
    responses_fd = os.open("responses", flags, dir_fd=bridge_fd)
    lib_fd = os.open("lib", flags, dir_fd=bridge_fd)
    write_file(lib_fd, "codeaction_tools.py", module.encode())
    write_file(bridge_fd, "program.py", program.encode())
    os.close(lib_fd)
    os.close(bridge_fd)
    return requests_fd, responses_fd


def send_go(go_fd, bridge, workdir):
    """Tells the waiting interpreter what to run, and where (its go line), and closes its go pipe."""
    go = {
        "lib": os.path.join(bridge, "lib"),
        "program": os.path.join(bridge, "program.py"),
        "workDirectory": workdir,
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
    os.close(go_fd)


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


class Relay:
    def __init__(self):
        self.selector = selectors.DefaultSelector()
        self.host = HostChannel(self.on_host_gone)
        self.bell = ReplyBell(self.selector, self.host.notice)
        self.doorbell = RequestDoorbell(self.selector, self.host)
        self.processes = ProgramProcesses()
        self.started = False
        self.streams = {}
        # Every read of the program's output lands here (Stream.take).
        self.read_buffer = bytearray(CHUNK_BYTES)
        # Set by start(): the program's output folder and the bridge's responses folder.
        self.output_directory = None
        self.responses_fd = None

    # Frames from the host -----------------------------------------------------------------

    def read_host(self):
        self.host.receive()
        self.process_host_frames()

    def process_host_frames(self):
        while True:
            try:
                frame = self.host.next_frame()
            except FrameTooLarge as error:
                self.fatal(str(error))
            if frame is None:
                return
            self.on_host_frame(*frame)

    def on_host_frame(self, kind, payload):
        if kind == b"S" and not self.started:
            self.start(json.loads(payload))
        elif kind == b"A":
            newline = payload.index(b"\n")
            header = json.loads(payload[:newline])
            self.answer(header["id"], payload[newline + 1 :])
        elif kind == b"K":
            self.processes.kill_requested = True
            self.processes.kill_everything()
        else:
            self.fatal(f"unexpected frame from the host: {kind!r}")

    def fatal(self, message):
        self.host.send_json(b"F", {"message": message})
        self.processes.kill_everything()
        sys.exit(70)

    def on_host_gone(self):
        self.host.gone = True
        self.processes.kill_everything()
        os._exit(0)

    def answer(self, request_id, body):
        if not self.doorbell.settle(request_id):
            return
        try:
            write_file(self.responses_fd, request_id + ".json", body)
        except OSError as error:
            self.host.notice(f"could not write the response of {request_id}: {os.strerror(error.errno)}")
        self.bell.ring(request_id)
        if self.doorbell.fd is not None:
            self.doorbell.drain()

    # Start --------------------------------------------------------------------------------

    def start(self, options):
        self.started = True
        processes = self.processes
        processes.kill_stragglers = bool(options.get("killStragglers")) and os.getuid() != 0
        limit = int(options["maxOutputBytes"])
        bridge = options["bridgeDirectory"]
        workdir = options["workDirectory"]
        self.output_directory = os.path.join(workdir, "out")
        requests_fd, self.responses_fd = prepare_bridge(bridge, options["module"], options["program"])

        waiting = processes.take_interpreter()
        pid = waiting["pid"]
        out_read, err_read = waiting["out"], waiting["err"]
        self.bell.fd = waiting["reply"]
        processes.protect_others(pid)
        send_go(waiting["go"], bridge, workdir)

        processes.child_pid = pid
        self.streams = {
            out_read: Stream(b"O", "stdout", out_read, limit),
            err_read: Stream(b"E", "stderr", err_read, limit),
        }
        for fd in self.streams:
            self.selector.register(fd, selectors.EVENT_READ, "stream")
        self.doorbell.open(waiting["request"], requests_fd, int(options["maxRequestBytes"]))
        self.host.send_json(b"R", {"pid": pid})

    # The program's output ----------------------------------------------------------------

    def read_stream(self, stream):
        try:
            count = os.readv(stream.fd, [self.read_buffer])
        except OSError:
            count = 0
        if not count:
            self.close_stream(stream)
            return False
        head = stream.take(self.read_buffer, count)
        if head:
            self.host.send(stream.kind, head)
        return True

    def close_stream(self, stream):
        if stream.open:
            stream.open = False
            self.selector.unregister(stream.fd)
            os.close(stream.fd)

    def flush_tail(self, stream):
        frame = stream.final_tail()
        if frame is not None:
            self.host.send_with_header(b"T", *frame)

    # Ending -------------------------------------------------------------------------------

    def finish(self):
        self.doorbell.accepting = False
        self.processes.kill_everything()
        self.doorbell.close()
        self.bell.close()
        self.drain_streams()
        for stream in self.streams.values():
            self.flush_tail(stream)
        exit_code, signal_number = self.processes.exit_code_and_signal()
        out, err = self.streams.values()
        self.host.send_json(
            b"X",
            {
                "exitCode": exit_code,
                "signal": signal_number,
                "killed": self.processes.kill_requested,
                "stdoutBytes": out.total,
                "stderrBytes": err.total,
                "requests": self.doorbell.requests,
                "notices": self.host.notices,
                "outputEntries": count_output_entries(self.output_directory),
            },
        )
        sys.exit(0)

    def drain_streams(self):
        """Reads what is left in the output pipes, for at most DRAIN_SECONDS."""
        deadline = time.monotonic() + DRAIN_SECONDS
        while any(stream.open for stream in self.streams.values()):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            for key, _ in self.selector.select(remaining):
                if key.data == "stream":
                    self.read_stream(self.streams[key.fd])
                elif key.data == "host":
                    self.read_host()

    # The loop -----------------------------------------------------------------------------

    def run(self):
        # The program's interpreter started when the relay loaded; it waits for the start frame too.
        self.processes.start_ahead()
        wake_read, wake_write = os.pipe()
        os.set_blocking(wake_read, False)
        os.set_blocking(wake_write, False)
        signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        os.set_blocking(1, False)
        self.selector.register(0, selectors.EVENT_READ, "host")
        self.selector.register(wake_read, selectors.EVENT_READ, "wake")
        while True:
            for key, _ in self.selector.select(1.0):
                self.on_ready(key.data, key.fd, wake_read)
            # Frames the host sent while the relay waited to write are handled now.
            self.process_host_frames()
            if self.processes.reap():
                self.finish()

    def on_ready(self, what, fd, wake_read):
        if what == "host":
            self.read_host()
        elif what == "stream":
            stream = self.streams.get(fd)
            if stream is not None and stream.open:
                self.read_stream(stream)
        elif what == "doorbell":
            if self.doorbell.fd is not None:
                self.doorbell.read()
        elif what == "bell":
            self.bell.flush()
        elif what == "wake":
            try:
                os.read(wake_read, 4096)
            except BlockingIOError:
                pass


if __name__ == "__main__":
    Relay().run()
