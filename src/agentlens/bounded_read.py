"""Reading a file the user never named (a sidecar beside a trace, a sub-agent file it links to):
only a regular file, never waited for, and never more than a bound."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def read_regular(path: Path, limit: int | None, over: str) -> bytes:
    """The file's bytes, at most `limit` (None: no bound). Opened without blocking and checked on
    the open file, so a FIFO is never waited for, a link to `/dev/zero` never read for ever, and
    a file swapped in after a check is still the one checked. Raises an `OSError` naming why:
    not a regular file, or `over` (the size is checked first, then the read is bounded, for a
    file that grows)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if limit is None:
            return handle.read()
        data = b"" if info.st_size > limit else handle.read(limit + 1)
    if info.st_size > limit or len(data) > limit:
        raise OSError(errno.EFBIG, over, str(path))
    return data
