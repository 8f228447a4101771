"""Tool calls from a codeaction program.

Each tool is a function below (generated from its schema). Calling one writes a request file in
the bridge folder, rings the relay's doorbell and waits for the host's answer. Thread-safe: calls
from many threads run concurrently, each gets its own answer.

    from codeaction_tools import *   # optional: the functions are also built in

Errors: ToolError (the tool failed), ToolDenied (the call was not approved),
ToolCallLimitExceeded (the run used up its tool calls). All are ToolError, so one except catches them.
"""

import json as _json
import os as _os
import stat as _stat
import threading as _threading
import datetime
from typing import Any, Literal, NotRequired, TypedDict

# Used by the generated stubs (put in place of the marker at the end): named here so the linter
# sees them used.
_STUB_NAMES = (datetime, Any, Literal, NotRequired, TypedDict)


class ToolError(Exception):
    """A tool call failed; the message says why."""


class ToolDenied(ToolError):
    """The call was not approved."""


class ToolCallLimitExceeded(ToolError):
    """The run used up its tool calls (maxToolCalls)."""


_ERROR_TYPES = {
    "ToolError": ToolError,
    "ToolDenied": ToolDenied,
    "ToolCallLimitExceeded": ToolCallLimitExceeded,
}


def _jsonable(value):
    for method in ("tolist", "item", "isoformat"):
        convert = getattr(value, method, None)
        if callable(convert):
            return _exact_ints(convert())
    if isinstance(value, (set, frozenset)):
        return _exact_ints(list(value))
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_SAFE_INTEGER = 2**53 - 1


def _exact_ints(value):
    """Ints past 2^53 as strings of their digits: a JSON number that large is rounded on the host.

    A bigint argument turns the digits back into the exact number (see tool-input-values.ts).
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if abs(value) > _SAFE_INTEGER else value
    if isinstance(value, dict):
        return {key: _exact_ints(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_exact_ints(item) for item in value]
    return value


_TAG = "\u0000codeaction"


def _decode_tagged(value):
    """Values JSON has no form for travel tagged (see tool-value.ts): bytes, maps with non-string keys."""
    kind = value.get(_TAG) if len(value) <= 3 else None
    if kind == "bytes":
        import base64

        return base64.b64decode(value["base64"])
    if kind == "map":
        return {_hashable(key): item for key, item in value["entries"]}
    return value


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


class _Waiter:
    __slots__ = ("event", "response", "problem")

    def __init__(self):
        self.event = _threading.Event()
        self.response = None
        self.problem = None


class _Bridge:
    def __init__(self):
        environment = _os.environ
        self.directory = environment.get("CODEACTION_BRIDGE_DIR")
        self.request_fd = int(environment.get("CODEACTION_REQUEST_FD", "3"))
        self.reply_fd = int(environment.get("CODEACTION_REPLY_FD", "4"))
        self.pid = _os.getpid()
        self.lock = _threading.Lock()
        self.waiters = {}
        self.reader = None
        self.closed = None

    def call(self, tool, arguments):
        if self.directory is None:
            raise ToolError("the tool bridge is not available: run this program through codeaction")
        if _os.getpid() != self.pid:
            raise ToolError("tools can only be called from the program's own process; use threads instead")
        if not isinstance(arguments, dict):
            raise ToolError(f"the arguments for {tool} must be a dict, got {type(arguments).__name__}")
        request_id = _os.urandom(12).hex()
        try:
            payload = _json.dumps(
                {"id": request_id, "tool": tool, "args": _exact_ints(arguments)},
                allow_nan=False,
                default=_jsonable,
            ).encode()
        except (TypeError, ValueError, RecursionError) as error:
            raise ToolError(f"the arguments for {tool} cannot be sent as JSON: {error}") from None
        waiter = _Waiter()
        with self.lock:
            if self.closed is not None:
                raise ToolError(self.closed)
            self.waiters[request_id] = waiter
            if self.reader is None:
                self.reader = _threading.Thread(target=self._read_replies, name="codeaction-replies", daemon=True)
                self.reader.start()
        try:
            self._write_request(request_id, payload)
            _os.write(self.request_fd, request_id.encode() + b"\n")
        except OSError as error:
            with self.lock:
                self.waiters.pop(request_id, None)
            raise ToolError(f"could not send the call to {tool}: {error}") from None
        waiter.event.wait()
        if waiter.response is None:
            raise ToolError(waiter.problem or "the tool call got no answer")
        response = waiter.response
        if response.get("ok") is True:
            return response.get("value")
        error = response.get("error") if isinstance(response.get("error"), dict) else {}
        kind = _ERROR_TYPES.get(error.get("type"), ToolError)
        raise kind(str(error.get("message") or f"the call to {tool} failed"))

    def _write_request(self, request_id, payload):
        folder = _os.path.join(self.directory, "requests")
        temporary = _os.path.join(folder, f".{request_id}.tmp")
        flags = _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL | _os.O_NOFOLLOW | _os.O_CLOEXEC
        fd = _os.open(temporary, flags, 0o600)
        try:
            view = memoryview(payload)
            while view:
                view = view[_os.write(fd, view) :]
        finally:
            _os.close(fd)
        _os.rename(temporary, _os.path.join(folder, request_id + ".json"))

    def _read_replies(self):
        buffer = b""
        while True:
            try:
                data = _os.read(self.reply_fd, 65536)
            except OSError:
                data = b""
            if not data:
                self._close("the tool bridge is closed: the run has ended")
                return
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            if len(buffer) > 256:
                buffer = b""
            for line in lines:
                self._deliver(line.decode("ascii", "replace"))

    def _deliver(self, request_id):
        with self.lock:
            waiter = self.waiters.pop(request_id, None)
        path = _os.path.join(self.directory, "responses", request_id + ".json")
        if waiter is None:
            return
        try:
            fd = _os.open(path, _os.O_RDONLY | _os.O_NOFOLLOW | _os.O_NONBLOCK | _os.O_CLOEXEC)
            try:
                if not _stat.S_ISREG(_os.fstat(fd).st_mode):
                    raise OSError("the response is not a regular file")
                chunks = []
                while True:
                    chunk = _os.read(fd, 1 << 20)
                    if not chunk:
                        break
                    chunks.append(chunk)
            finally:
                _os.close(fd)
            _os.unlink(path)
            response = _json.loads(b"".join(chunks), object_hook=_decode_tagged)
            if not isinstance(response, dict):
                raise ValueError("the response is not an object")
            waiter.response = response
        except (OSError, ValueError) as error:
            waiter.problem = f"could not read the tool's answer: {error}"
        waiter.event.set()

    def _close(self, reason):
        with self.lock:
            self.closed = reason
            waiters = list(self.waiters.values())
            self.waiters.clear()
        for waiter in waiters:
            waiter.problem = reason
            waiter.event.set()


_bridge = _Bridge()


def _call(tool_name, args):
    """Calls the host tool `tool_name` (its original name) with `args`; returns its JSON result."""
    return _bridge.call(tool_name, args)


__all__ = ["ToolError", "ToolDenied", "ToolCallLimitExceeded"]

# @@CODEACTION_STUBS@@
