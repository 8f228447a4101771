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
_line = b""
while not _line.endswith(b"\n"):
    _chunk = os.read(0, 65536)
    if not _chunk:
        os._exit(0)
    _line += _chunk
_go = json.loads(_line)
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
os.environ.update(_go["environment"])
os.chdir(_go["workDirectory"])
sys.path.insert(0, _go["lib"])
import codeaction_tools
for _name in getattr(codeaction_tools, "__all__", ()):
    setattr(builtins, _name, getattr(codeaction_tools, _name))
_path = _go["program"]
sys.argv = [_path]
_main = types.ModuleType("__main__")
_main.__file__ = _path
_main.__builtins__ = builtins
sys.modules["__main__"] = _main
_ours = (os.path.join(_go["lib"], "codeaction_tools.py"), "<string>")
try:
    with open(_path, "rb") as _file:
        _code = compile(_file.read(), _path, "exec")
    exec(_code, _main.__dict__)
except SystemExit:
    raise
except BaseException as _error:
    _frames = []
    _frame = _error.__traceback__
    while _frame is not None:
        if _frame.tb_frame.f_code.co_filename not in _ours:
            _frames.append(_frame)
        _frame = _frame.tb_next
    _kept = None
    for _frame in reversed(_frames):
        _kept = types.TracebackType(_kept, _frame.tb_frame, _frame.tb_lasti, _frame.tb_lineno)
    _error = _error.with_traceback(_kept)
    sys.excepthook(type(_error), _error, _kept)
    sys.exit(1)
