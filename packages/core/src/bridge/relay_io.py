"""Part of the bridge relay (relay.py says how the modules are joined): /proc, request files, and
the program's output streams."""

import os
import signal
import stat
import time

from relay import CHUNK_BYTES


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
