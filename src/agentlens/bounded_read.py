"""Opening any input (`open_regular`: a trace, in `formats.load`, as well as the files below):
only a regular file, never waited for. Reading a file the user never named (a sidecar beside a
trace, a sub-agent file it links to): never more than a bound; and a side file the user named
(`read_named`)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, NamedTuple


class NotRegularFile(OSError):
    """A FIFO, a device, a socket or a folder where a regular file was to be read; `mode` is
    its `st_mode`, for a caller to name what it is."""

    def __init__(self, path: Path, mode: int) -> None:
        super().__init__(errno.EINVAL, "not a regular file", str(path))
        self.mode = mode


class Opened(NamedTuple):
    handle: BinaryIO
    size: int
    """The file's size when it was opened, from the open file: what is read of it at most, and
    what a size cap is checked against (a path's `stat` can be of another file by the time it
    is opened). 0: nothing is to be read (empty, or a kernel file whose size says nothing:
    `/proc/kmsg` waits for the next kernel message, and takes it from the host's log)."""


def open_regular(path: Path) -> Opened:
    """The one way a file the user gave or a trace points to is opened: without waiting
    (`O_NONBLOCK`), so a FIFO is never waited for, and checked on the open file, so a FIFO or
    a link to `/dev/zero` swapped in after a check by path is still refused. Raises an `OSError`
    (`NotRegularFile` for what is not a regular file)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise NotRegularFile(path, info.st_mode)
    return Opened(os.fdopen(fd, "rb"), info.st_size)


def read_regular(path: Path, limit: int | None, over: str) -> bytes:
    """The file's bytes (`open_regular`), at most `limit` (None: no bound). Raises an `OSError`
    naming why: not a regular file, or `over` (the size is checked first, then the read is
    bounded, for a file that grows)."""
    handle, size = open_regular(path)
    with handle:
        if size == 0:
            return b""
        if limit is None:
            return handle.read()
        data = b"" if size > limit else handle.read(limit + 1)
    if size > limit or len(data) > limit:
        raise OSError(errno.EFBIG, over, str(path))
    return data


def read_named(path: str | Path) -> bytes:
    """A file the user named beside the traces (a reference, a task list, a config, a scenario's
    prompt), as `read_regular` reads it, with no bound: a FIFO or `/dev/zero` named as one was
    waited on, or read until memory ran out. Raises an `OSError` (`not a regular file`)."""
    return read_regular(Path(path), None, "")


def read_head(path: Path, size: int) -> bytes:
    """The first `size` bytes of a regular file (`open_regular`), and nothing of a file whose
    size is 0."""
    handle, found = open_regular(path)
    with handle:
        return handle.read(min(size, found))
