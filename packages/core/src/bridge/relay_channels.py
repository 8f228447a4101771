"""Part of the bridge relay (relay.py says how the modules are joined): the frames to and from the
host, and the program's doorbells."""

import json
import os
import select
import selectors

from relay import CHUNK_BYTES, HEADER, ID_PATTERN, MAX_DOORBELL_LINE_BYTES, MAX_HOST_FRAME_BYTES, MAX_NOTICES
from relay import MAX_OUTSTANDING, MAX_PENDING_BELL_BYTES
from relay_io import read_request_file


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

    def clear(self):
        """Between two steps: rings not yet taken are dropped (their calls were cancelled)."""
        self.buffer.clear()
        if self.waiting:
            self.selector.unregister(self.fd)
            self.waiting = False

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
        """Opens the doorbell for a program (again for each step of a kept interpreter)."""
        self.fd = fd
        self.requests_fd = requests_fd
        self.max_request_bytes = max_request_bytes
        self.accepting = True
        self.requests = 0
        self.paused = False
        self.selector.register(fd, selectors.EVENT_READ, "doorbell")

    def suspend(self):
        """Between two steps: not read, and nothing outstanding (the host cancelled those calls)."""
        self.pause()
        self.outstanding.clear()
        self.buffer.clear()
        self.skipping = False

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
