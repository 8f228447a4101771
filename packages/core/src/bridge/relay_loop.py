"""Part of the bridge relay (relay.py says how the modules are joined): the program's processes, the
start, and the relay's loop."""

import json
import os
import selectors
import signal
import sys
import time

from relay import CHUNK_BYTES, DRAIN_SECONDS, WAITING_INTERPRETER, start_interpreter
from relay_channels import FrameTooLarge, HostChannel, ReplyBell, RequestDoorbell
from relay_io import Stream, kill_leftover_processes, list_pids, process_start_time, write_file
from relay_steps import StepEnds, count_output_entries, prepare_bridge, send_go, send_next_program


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
        for key in ("go", "out", "err", "request", "reply", "steps"):
            os.close(self.waiting[key])
        self.waiting = None
        return False

    def protect_others(self, pid):
        self.protected = {(other, process_start_time(other)) for other in list_pids() if other != pid}

    def kill_others(self):
        """A step ended: whatever the program started is killed, its interpreter is kept."""
        if self.kill_stragglers:
            kept = self.protected | {(self.child_pid, process_start_time(self.child_pid))}
            kill_leftover_processes(kept)

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
        # Set by start(): the program's output folder, the bridge's folders, the interpreter's pipes.
        self.output_directory = None
        self.responses_fd = None
        self.requests_fd = None
        self.pipes = None
        # A kept interpreter (the start frame's "keep"): the step running (from 1), whether the relay
        # waits between two steps, the steps' ends, and the bridge folder for the next programs.
        self.keep = False
        self.step = 0
        self.between_steps = False
        self.step_ends = None
        self.bridge = None
        self.bridge_fd = None

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
        elif kind == b"S" and self.between_steps:
            self.next_step(json.loads(payload))
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
        self.keep = bool(options.get("keep"))
        bridge = options["bridgeDirectory"]
        workdir = options["workDirectory"]
        self.output_directory = os.path.join(workdir, "out")
        bridge_fd, self.requests_fd, self.responses_fd = prepare_bridge(bridge, options["module"], options["program"])

        waiting = processes.take_interpreter()
        self.pipes = waiting
        self.bell.fd = waiting["reply"]
        processes.protect_others(waiting["pid"])
        send_go(waiting["go"], bridge, workdir, self.keep)
        processes.child_pid = waiting["pid"]
        if self.keep:
            self.bridge, self.bridge_fd = bridge, bridge_fd
            self.step_ends = StepEnds(waiting["steps"])
            self.selector.register(waiting["steps"], selectors.EVENT_READ, "steps")
            for fd in (waiting["out"], waiting["err"]):
                os.set_blocking(fd, False)
        else:
            os.close(bridge_fd)
            os.close(waiting["steps"])
        self.step = 1
        self.open_step(options)

    def open_step(self, options):
        """The step's streams and doorbell open (each step counts its own output and requests)."""
        limit = int(options["maxOutputBytes"])
        out_read, err_read = self.pipes["out"], self.pipes["err"]
        self.streams = {
            out_read: Stream(b"O", "stdout", out_read, limit),
            err_read: Stream(b"E", "stderr", err_read, limit),
        }
        for fd in self.streams:
            self.selector.register(fd, selectors.EVENT_READ, "stream")
        self.doorbell.open(self.pipes["request"], self.requests_fd, int(options["maxRequestBytes"]))
        self.host.send_json(b"R", {"pid": self.processes.child_pid, "step": self.step})

    def next_step(self, options):
        """The kept interpreter's next program (a start frame between two steps)."""
        self.between_steps = False
        self.step += 1
        if not send_next_program(self.pipes["go"], self.bridge_fd, self.bridge, self.step, options["program"]):
            self.fatal("the interpreter did not take its earlier programs: it is not waiting for the next one")
        self.open_step(options)

    def end_step(self, status, summary):
        """The kept interpreter's program ended: its output and exit reported, the interpreter kept."""
        self.doorbell.accepting = False
        self.doorbell.suspend()
        self.bell.clear()
        self.processes.kill_others()
        for stream in self.streams.values():
            while stream.open and self.read_stream(stream):
                pass
            self.flush_tail(stream)
        out, err = self.streams.values()
        self.host.send_json(
            b"X",
            {
                "exitCode": status,
                "signal": None,
                "killed": False,
                "stdoutBytes": out.total,
                "stderrBytes": err.total,
                "requests": self.doorbell.requests,
                "notices": self.host.notices,
                "outputEntries": count_output_entries(self.output_directory),
                "living": True,
                "summary": summary,
            },
        )
        for stream in self.streams.values():
            if stream.open:
                self.selector.unregister(stream.fd)
        self.between_steps = True

    def read_step_end(self):
        ended = self.step_ends.read()
        if self.step_ends.closed:
            self.selector.unregister(self.step_ends.fd)
        elif ended is not None and not self.between_steps:
            self.end_step(*ended)

    # The program's output ----------------------------------------------------------------

    def read_stream(self, stream):
        try:
            count = os.readv(stream.fd, [self.read_buffer])
        except BlockingIOError:
            return False
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
        if self.between_steps:
            # The kept interpreter ended between two steps: nothing runs, nothing to report; the
            # host sees the relay's end.
            sys.exit(0)
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
        elif what == "steps":
            self.read_step_end()
        elif what == "bell":
            self.bell.flush()
        elif what == "wake":
            try:
                os.read(wake_read, 4096)
            except BlockingIOError:
                pass


if __name__ == "__main__":
    Relay().run()
