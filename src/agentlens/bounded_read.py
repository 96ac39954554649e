"""Reading a file the user never named (a sidecar beside a trace, a sub-agent file it links to):
only a regular file, never waited for, and never more than a bound; and a side file the user
named (`read_named`), only a regular file, never waited for."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO


def read_regular(path: Path, limit: int | None, over: str) -> bytes:
    """The file's bytes, at most `limit` (None: no bound). Opened without blocking and checked on
    the open file, so a FIFO is never waited for, a link to `/dev/zero` never read for ever, and
    a file swapped in after a check is still the one checked. Raises an `OSError` naming why:
    not a regular file, or `over` (the size is checked first, then the read is bounded, for a
    file that grows)."""
    with _opened(path) as handle:
        info = os.fstat(handle.fileno())
        if info.st_size == 0:  # empty, or a kernel file: reading /proc/kmsg takes the host's log
            return b""
        if limit is None:
            return handle.read()
        data = b"" if info.st_size > limit else handle.read(limit + 1)
    if info.st_size > limit or len(data) > limit:
        raise OSError(errno.EFBIG, over, str(path))
    return data


def read_named(path: str | Path) -> bytes:
    """A file the user named beside the traces (a reference, a task list, a config, a scenario's
    prompt), as `read_regular` reads it, with no bound: a FIFO or `/dev/zero` named as one was
    waited on, or read until memory ran out. Raises an `OSError` (`not a regular file`)."""
    return read_regular(Path(path), None, "")


def read_head(path: Path, size: int) -> bytes:
    """The first `size` bytes of a regular file, opened as `read_regular` opens it, and nothing
    of a file whose size is 0 (empty, or a kernel file: `/proc/kmsg` waits for ever)."""
    with _opened(path) as handle:
        return handle.read(min(size, os.fstat(handle.fileno()).st_size))


def _opened(path: Path) -> BinaryIO:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return os.fdopen(fd, "rb")
