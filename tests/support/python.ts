/**
 * Python helpers the hostile programs share: raw system calls through ctypes (the answer is "ok" or
 * the errno's name) and running a probe in a forked child (for calls that change the caller, such
 * as unshare, so the rest of the program is not affected; a child killed by a signal answers
 * "signal SIGSYS" and the like).
 */
export const pythonPrelude = `
import ctypes, errno, json, os, signal, socket
libc = ctypes.CDLL(None, use_errno=True)

def syscall(number, *arguments):
    converted = [argument if isinstance(argument, (bytes, ctypes.Array)) else ctypes.c_long(argument) for argument in arguments]
    result = libc.syscall(ctypes.c_long(number), *converted)
    return "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))

def attempt(function):
    try:
        value = function()
        return "ok" if value is None else value
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno)) if error.errno else repr(error)

def in_child(function):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            value = function()
        except Exception as error:
            value = "raised " + repr(error)
        os.write(write, json.dumps(value).encode())
        os._exit(0)
    os.close(write)
    data = b""
    while True:
        chunk = os.read(read, 65536)
        if not chunk:
            break
        data += chunk
    _, status = os.waitpid(pid, 0)
    if not data and os.WIFSIGNALED(status):
        return "signal " + signal.Signals(os.WTERMSIG(status)).name
    return json.loads(data)
`;
