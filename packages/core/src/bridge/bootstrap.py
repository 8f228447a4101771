"""The codeaction bootstrap: the first code of the program's process (see relay.py, which starts it).

Runs in the program's process, started before the program is known (so the interpreter's
start-up is off a run's critical path): loads what `codeaction_tools` imports and the modules named
in its arguments (codeAction.preimport, such as pandas; one that fails is left for the program's own
import to report, and Python does not keep a failed import), then waits for one
"go" line on fd 0 (where to find the program and the module, the environment, the working
folder), puts /dev/null on fd 0, makes `codeaction_tools` importable, puts its public names into
builtins (so the stubs work without an import), and runs the program file as __main__. An
uncaught exception is printed without this bootstrap's frame or the codeaction_tools module's (the
stubs and the bridge), so a traceback shows the program's own lines only (a SyntaxError too).

With "keep" in the go line (codeAction.maxSteps above 1, or a thread), the interpreter outlives the
program: when the program ends (an uncaught exception and sys.exit() included) it writes one line on
fd 5, its step's end (the exit status and a short summary of what __main__ holds), and waits for the
next go line, whose program runs in the same __main__. Without "keep", fd 5 is closed at once and
the first program's end is the interpreter's.

relay.py carries this file's text (python-sources.ts joins the two when it loads them) and runs it
as `python3 -s -P -B -u -X utf8 -c <this source>` with PYTHONHASHSEED=0 and no other PYTHON* variable.
"""

import builtins, os, sys, types
import json, stat, threading, typing
# Loaded while the program is awaited, for the codeaction_tools module and most programs: named here
# so the linter sees them used.
_PRELOADED = (stat, threading, typing)
for _name in sys.argv[1:]:
    try:
        __import__(_name)
    except BaseException:
        pass


def _read_go(fd):
    """One go line from `fd` (a JSON object), or None when the relay closed it."""
    line = b""
    while not line.endswith(b"\n"):
        chunk = os.read(fd, 65536)
        if not chunk:
            return None
        line += chunk
    return json.loads(line)


_go = _read_go(0)
if _go is None:
    os._exit(0)
_keep = bool(_go.get("keep"))
# Kept: the go pipe and the step pipe move to descriptors a subprocess does not inherit.
_control = os.dup(0) if _keep else None
_steps = os.dup(5) if _keep else None
try:
    os.close(5)
except OSError:
    pass
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
os.environ.update(_go["environment"])
os.chdir(_go["workDirectory"])
sys.path.insert(0, _go["lib"])
import codeaction_tools
for _name in getattr(codeaction_tools, "__all__", ()):
    setattr(builtins, _name, getattr(codeaction_tools, _name))
_main = types.ModuleType("__main__")
_main.__builtins__ = builtins
sys.modules["__main__"] = _main
_ours = (os.path.join(_go["lib"], "codeaction_tools.py"), "<string>")


def _report(error):
    """Prints an uncaught exception without the bootstrap's and codeaction_tools' frames."""
    frames = []
    frame = error.__traceback__
    while frame is not None:
        if frame.tb_frame.f_code.co_filename not in _ours:
            frames.append(frame)
        frame = frame.tb_next
    kept = None
    for frame in reversed(frames):
        kept = types.TracebackType(kept, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    error = error.with_traceback(kept)
    sys.excepthook(type(error), error, kept)


def _exit_status(code):
    """What sys.exit(code) makes the exit status, printing a message code as Python does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _run(path):
    """Runs the program file in __main__; its exit status (an uncaught exception's is 1)."""
    sys.argv = [path]
    _main.__file__ = path
    try:
        with open(path, "rb") as file:
            code = compile(file.read(), path, "exec")
        exec(code, _main.__dict__)
    except SystemExit as exit:
        return _exit_status(exit.code)
    except BaseException as error:
        _report(error)
        return 1
    return 0


_SUMMARY_NAMES = 60
_SUMMARY_LINE = 200
_SUMMARY_TOTAL = 6000


def _short(text, size):
    return text if len(text) <= size else text[: size - 3] + "..."


def _describe(value):
    """One line about a value: its type, and for tables, arrays and collections their size."""
    kind = type(value)
    name = kind.__qualname__
    if isinstance(value, types.ModuleType):
        return "module " + value.__name__
    if isinstance(value, (types.FunctionType, type)):
        code = getattr(value, "__code__", None)
        args = ", ".join(code.co_varnames[: code.co_argcount]) if code else ""
        return ("class " if isinstance(value, type) else "function ") + f"{value.__name__}({args})"
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple):
        columns = getattr(value, "columns", None)
        text = f"{name} shape {shape}"
        if columns is not None:
            text += " columns " + _short(", ".join(str(column) for column in list(columns)[:30]), 150)
        dtype = getattr(value, "dtype", None)
        return text + (f" dtype {dtype}" if dtype is not None else "")
    if isinstance(value, (str, bytes)):
        return f"{name} len {len(value)}: {_short(repr(value), 80)}"
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        text = f"{name} len {len(value)}"
        if isinstance(value, dict) and value:
            text += " keys " + _short(", ".join(repr(key) for key in list(value)[:10]), 120)
        return text
    if value is None or isinstance(value, (bool, int, float, complex)):
        return f"{name} {_short(repr(value), 80)}"
    return name


def _summary():
    """What __main__ holds, one bounded line a name (names starting with _ aside)."""
    names = [name for name in list(_main.__dict__) if not name.startswith("_")]
    lines = []
    size = 0
    for name in names[:_SUMMARY_NAMES]:
        try:
            line = _short(f"{name}: {_describe(_main.__dict__[name])}", _SUMMARY_LINE)
        except Exception:
            line = f"{name}: (could not be described)"
        size += len(line) + 1
        if size > _SUMMARY_TOTAL:
            break
        lines.append(line)
    if len(lines) < len(names):
        lines.append(f"... and {len(names) - len(lines)} more names")
    return "\n".join(lines)


def _attribute(value, name):
    """`value.name`, or None (a detached or closed file raises where a plain object would not)."""
    try:
        return getattr(value, name, None)
    except BaseException:
        return None


def _writes(value):
    """Whether a file object is open for writing (a closed or odd one counts as not)."""
    try:
        return not value.closed and value.writable()
    except BaseException:
        return False


def _kind_of(kind, archives):
    """What an object of this type is at exit: an open "file" or "archive" (closed here), a
    "paused" generator or coroutine (its finally blocks run only at Python's own teardown), a
    "finalizer" (a __del__ of its own class), or None (its end only frees memory)."""
    import io, types

    if issubclass(kind, io.IOBase):
        return "file"
    if archives and issubclass(kind, archives):
        return "archive"
    if kind in (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType):
        return "paused"
    if getattr(kind, "__del__", None) is not None:
        return "finalizer"
    # A C type whose end does more than free memory: an SQLite connection rolls back and removes
    # its journal file.
    connection = _attribute(sys.modules.get("sqlite3"), "Connection")
    return "finalizer" if connection is not None and issubclass(kind, connection) else None


def _paused(value):
    """Whether a generator or coroutine stopped part-way (not unstarted, not finished)."""
    for prefix in ("gi", "cr", "ag"):
        suspended = _attribute(value, prefix + "_suspended")
        if suspended is not None:
            return bool(suspended)
    return any(_attribute(value, prefix + "_frame") is not None for prefix in ("gi", "cr", "ag"))


def _files_at_exit():
    """The files open for writing and the archives the program left, each before the ones it
    writes into; None when something else in its heap must be finalized by Python itself (an
    object with a __del__, a paused generator), so that the interpreter exits as usual."""
    import gc

    archives = tuple(
        kind
        for kind in (_attribute(sys.modules.get("zipfile"), "ZipFile"), _attribute(sys.modules.get("tarfile"), "TarFile"))
        if kind is not None
    )
    kept = set()
    for stream in (sys.__stdout__, sys.__stderr__, sys.__stdin__):
        while stream is not None and id(stream) not in kept:
            kept.add(id(stream))
            stream = _attribute(stream, "buffer") or _attribute(stream, "raw")
    kinds = {}
    found = {}
    for value in gc.get_objects():
        kind = type(value)
        what = kinds[kind] if kind in kinds else kinds.setdefault(kind, _kind_of(kind, archives))
        if what == "finalizer" or (what == "paused" and _paused(value)):
            return None
        if (what == "file" and _writes(value)) or what == "archive":
            if id(value) not in kept:
                found[id(value)] = value
    return _wrappers_first(found)


def _wrappers_first(found):
    """`found`'s values ordered so that each comes before any it holds (as an attribute, through
    one plain object, or as a text or buffered file's buffer or raw file)."""
    holds = {}
    held = dict.fromkeys(found, 0)
    for key, value in found.items():
        inner = [_attribute(value, "buffer"), _attribute(value, "raw")]
        attributes = _attribute(value, "__dict__")
        for item in list(attributes.values()) if isinstance(attributes, dict) else []:
            inner.append(item)
            nested = None if id(item) in found else _attribute(item, "__dict__")
            if isinstance(nested, dict):
                inner.extend(nested.values())
        holds[key] = {id(item) for item in inner if id(item) in found and id(item) != key}
        for item in holds[key]:
            held[item] += 1
    order = []
    ready = [key for key, count in held.items() if count == 0]
    while ready:
        key = ready.pop()
        order.append(found[key])
        for item in holds[key]:
            held[item] -= 1
            if held[item] == 0:
                ready.append(item)
    placed = {id(value) for value in order}
    return order + [value for key, value in found.items() if key not in placed]


def _each(values, method):
    """Calls `method` on each value; one that fails (a closed file, a broken pipe) is passed over."""
    for value in values:
        try:
            getattr(value, method)()
        except BaseException:
            pass


def _finish(status):
    """Ends the program's process as Python's exit does, less the interpreter's teardown.

    Python's exit joins the non-daemon threads, runs the atexit functions and flushes the standard
    streams, then frees every object one by one (for a 1,000,000-row frame about 70 ms, on the
    run's critical path). Here the first steps happen as in Python. Then, when nothing but files
    needs finalizing (no other thread still running, no object with a __del__, no generator paused
    part-way), every file open for writing and every archive is closed, each before what it writes
    into, and the process ends at once; otherwise the interpreter exits as usual.
    """
    import atexit

    try:
        threading._shutdown()
    except BaseException:
        pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    try:
        files = _files_at_exit() if threading.active_count() == 1 else None
    except BaseException:
        files = None
    if files is None:
        # Python's own exit (its atexit functions ran already and do not run twice).
        raise SystemExit(status)
    _each(files, "close")
    _each((sys.stdout, sys.stderr), "flush")
    try:
        # What C libraries wrote through the C library's own buffers (exit() flushes them; _exit does not).
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except BaseException:
        pass
    os._exit(status)


def _flush_files():
    """At a step's end: every file open for writing flushed, so what the step wrote is on disk
    (the next step, or the host collecting /workspace/out, reads it whole). Not while another
    thread runs: it may hold a file's lock."""
    import gc, io

    if threading.active_count() != 1:
        return
    _each((value for value in gc.get_objects() if isinstance(value, io.IOBase) and _writes(value)), "flush")


while True:
    _status = _run(_go["program"])
    if not _keep:
        _finish(_status)
    try:
        _flush_files()
    except BaseException:
        pass
    for _stream in (sys.stdout, sys.stderr):
        try:
            _stream.flush()
        except Exception:
            pass
    try:
        _text = _summary()
    except BaseException:
        _text = ""
    _end = json.dumps({"status": _status, "summary": _text}).encode() + b"\n"
    try:
        while _end:
            _end = _end[os.write(_steps, _end) :]
    except OSError:
        os._exit(_status)
    _go = _read_go(_control)
    if _go is None:
        os._exit(0)
