"""Reads back /workspace/out in one exec, after the program has ended.

The host runs `python3 -I -S -c <this source> <limits as JSON>` and reads stdout: a sequence of
records, each one line of JSON, a file's record followed by exactly its bytes. Names go out as
hex of their raw bytes (never decoded). Nothing is followed: folders are opened with O_NOFOLLOW
relative to their parent's descriptor, files with O_NOFOLLOW | O_NONBLOCK, and the opened file's
fstat must be the regular file the listing saw (same inode, same size) or it is refused. The walk
stops at caps on entries, folders and depth and at a time budget, and says what it left behind.
The host checks every record again (output-listing.ts): this script is a convenience, not a guard.
"""

import json
import os
import stat
import sys
import time

LIMITS = json.loads(sys.argv[1])
DEADLINE = time.monotonic() + LIMITS["budgetSeconds"]
OUT = sys.stdout.buffer
DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class State:
    entries = 0
    folders = 0
    files = 0
    total_bytes = 0
    refused = 0
    stopped = None


def emit(record, content=b""):
    OUT.write(json.dumps(record, separators=(",", ":")).encode("ascii") + b"\n")
    if content:
        OUT.write(content)


def hex_parts(parts):
    return [part.hex() for part in parts]


def refuse(parts, kind, size=None):
    State.refused += 1
    if State.refused > LIMITS["maxRefusals"]:
        return
    record = {"type": "refused", "parts": hex_parts(parts), "kind": kind}
    if size is not None:
        record["size"] = size
    emit(record)


def over_budget():
    """Whether the walk must end now: out of time, or at the folder cap (the entry cap only stops
    listing: what was listed is still looked at)."""
    if State.stopped is None and time.monotonic() > DEADLINE:
        State.stopped = "time"
    return State.stopped in ("time", "folders")


def entries_of(folder_fd):
    """The folder's names and lstat results, sorted by raw name; stops at the entry cap."""
    found = []
    with os.scandir(folder_fd) as listing:
        for entry in listing:
            if State.entries >= LIMITS["maxEntries"]:
                State.stopped = State.stopped or "entries"
                break
            State.entries += 1
            try:
                found.append((os.fsencode(entry.name), entry.stat(follow_symlinks=False)))
            except OSError:
                continue
    found.sort(key=lambda item: item[0])
    return found


def read_file(folder_fd, name, listed):
    """The file's bytes, or the kind of refusal: never through a link, never another file."""
    try:
        descriptor = os.open(name, FILE_FLAGS, dir_fd=folder_fd)
    except OSError:
        return None, "unreadable"
    try:
        opened = os.fstat(descriptor)
        if not stat.S_ISREG(opened.st_mode):
            return None, "changed-type"
        if (opened.st_ino, opened.st_dev) != (listed.st_ino, listed.st_dev):
            return None, "changed"
        if opened.st_size != listed.st_size:
            return None, "changed-size"
        chunks = []
        remaining = listed.st_size + 1
        while remaining > 0:
            chunk = os.read(descriptor, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        content = b"".join(chunks)
        if len(content) != listed.st_size:
            return None, "changed-size"
        return content, None
    except OSError:
        return None, "unreadable"
    finally:
        os.close(descriptor)


def take_file(folder_fd, parts, listed):
    size = listed.st_size
    if State.files >= LIMITS["maxFiles"]:
        return refuse(parts, "max-files")
    if size > LIMITS["maxFileBytes"]:
        return refuse(parts, "file-bytes", size)
    if State.total_bytes + size > LIMITS["maxTotalBytes"]:
        return refuse(parts, "total-bytes", size)
    content, problem = read_file(folder_fd, parts[-1], listed)
    if problem is not None:
        return refuse(parts, problem)
    State.files += 1
    State.total_bytes += size
    emit({"type": "file", "parts": hex_parts(parts), "size": size}, content)


def walk(folder_fd, parts):
    for name, listed in entries_of(folder_fd):
        if over_budget():
            return
        path = parts + [name]
        if stat.S_ISDIR(listed.st_mode):
            if len(path) >= LIMITS["maxDepth"]:
                refuse(path, "depth")
            elif State.folders >= LIMITS["maxFolders"]:
                State.stopped = "folders"
                return
            else:
                State.folders += 1
                walk_folder(folder_fd, path)
        elif stat.S_ISLNK(listed.st_mode):
            refuse(path, "link")
        elif stat.S_ISREG(listed.st_mode):
            take_file(folder_fd, path, listed)
        else:
            refuse(path, "other")


def walk_folder(parent_fd, path):
    try:
        descriptor = os.open(path[-1], DIRECTORY_FLAGS, dir_fd=parent_fd)
    except OSError:
        return refuse(path, "unreadable")
    try:
        walk(descriptor, path)
    finally:
        os.close(descriptor)


def main():
    top = LIMITS["directory"]
    try:
        listed = os.lstat(top)
    except FileNotFoundError:
        return emit({"type": "end", "entries": 0, "folders": 0})
    if stat.S_ISLNK(listed.st_mode):
        refuse([], "top-link")
    elif not stat.S_ISDIR(listed.st_mode):
        refuse([], "top-not-folder")
    else:
        descriptor = os.open(top, DIRECTORY_FLAGS)
        try:
            walk(descriptor, [])
        finally:
            os.close(descriptor)
    record = {"type": "end", "entries": State.entries, "folders": State.folders, "refused": State.refused}
    if State.stopped is not None:
        record["stopped"] = State.stopped
    emit(record)


main()
OUT.flush()
