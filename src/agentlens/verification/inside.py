"""Reading a file of an agent's workspace on the host, where agent code may still be running.

AgentLens reads some files of a workspace itself (regex counts, exact file matches, IDE errors,
test reports), maybe as root. A stdio MCP server the agent's session started can still write
there: checking a path and then opening it by path leaves a moment in which it can swap the
file, or a folder above it, for a link to `/etc/shadow` or `~/.ssh/id_rsa`. So the file is
opened one component at a time from a descriptor of the workspace, each with `O_NOFOLLOW`,
and what was opened is checked and read through its own descriptor: a link anywhere on the way
is refused, whenever it appears. (Linux's `openat2(RESOLVE_BENEATH)` would do this in one call;
Python 3.11 does not offer it.)"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO the agent left must not wait for a writer
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class NotInsideError(OSError):
    """The path leaves the workspace, passes a link, or is not a regular file."""


class TooLargeError(OSError):
    """The file is larger than the caller reads."""


def read_inside(root: Path, path: Path | str, max_bytes: int) -> bytes:
    """The bytes of `path` (relative to `root`, or under it), read without following any link
    below `root`; OSError when it is gone, a link, not a regular file, or over `max_bytes`."""
    parts = _parts(root, path)
    descriptor = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name, flags in [*((folder, _FOLDER) for folder in parts[:-1]), (parts[-1], _FILE)]:
            parent, descriptor = descriptor, -1
            try:
                descriptor = os.open(name, flags, dir_fd=parent)
            finally:
                os.close(parent)
        return _read(descriptor, max_bytes, path)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise NotInsideError(f"{path}: a link or not a folder on the way") from None
        raise
    finally:
        if descriptor >= 0:
            os.close(descriptor)


MAX_TEXT_BYTES = 64 * 1024 * 1024  # a larger file is not source an agent wrote


def read_text_inside(root: Path, path: Path | str, max_bytes: int = MAX_TEXT_BYTES) -> str | None:
    """`read_inside` as text (undecodable bytes replaced); None when the file is gone, a link,
    not a regular file, or over `max_bytes`."""
    try:
        return read_inside(root, path, max_bytes).decode(errors="replace")
    except OSError:
        return None


def _parts(root: Path, path: Path | str) -> list[str]:
    relative = Path(path)
    if relative.is_absolute():
        try:
            relative = relative.relative_to(root)
        except ValueError:
            raise NotInsideError(f"{path}: not under {root}") from None
    parts = Path(os.path.normpath(relative)).parts
    if not parts or parts[0] in (".", "..", "/"):
        raise NotInsideError(f"{path}: not a file under {root}")
    return list(parts)


def _read(descriptor: int, max_bytes: int, path: Path | str) -> bytes:
    found = os.fstat(descriptor)
    if not stat.S_ISREG(found.st_mode):
        raise NotInsideError(f"{path}: not a regular file")
    if found.st_size > max_bytes:
        raise TooLargeError(f"{path}: {found.st_size} bytes, over {max_bytes}")
    chunks, left = [], max_bytes + 1
    while left > 0:
        chunk = os.read(descriptor, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    if left <= 0:  # it grew while being read
        raise TooLargeError(f"{path}: over {max_bytes} bytes")
    return b"".join(chunks)
