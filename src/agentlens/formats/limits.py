"""The input size cap: a trace file larger than it is one file's error, named with its size,
before a byte of it is read; the batch goes on and the exit code says a file failed.

Why a cap: the read path holds a file's bytes and then its parsed trajectories (about 9x the
file's size at peak, measured on the largest shared trace by `benchmarks/scale.py --largest`), so
one hostile or mistaken multi-gigabyte file would take the whole machine's memory. Why 1 GiB by
default: the largest real trace in ../shared/data is 3 MiB, so 1 GiB is over 300x any trace
seen, while its ~9 GiB peak still fits a developer's machine. `--max-file-size SIZE` (a global
option) or `AGENTLENS_MAX_FILE_SIZE=SIZE` changes it; SIZE is bytes or a number with K, M, G or
T (powers of 1024, `KiB`/`KB` spellings too), and `0` or `none` lifts it."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from agentlens.bounded_read import read_regular
from agentlens.errors import ConfigError, TraceError

DEFAULT_MAX_FILE_SIZE = 1 << 30
ENV = "AGENTLENS_MAX_FILE_SIZE"
_UNITS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", re.IGNORECASE)
_flag: tuple[int | None] | None = None  # (cap,) once the CLI sets it


def parse_size(text: str) -> int | None:
    """Bytes from `2GiB`, `512M`, `1000000`; None for no cap (`0`, `none`)."""
    spoken = text.strip().lower()
    if spoken in {"none", "off", "unlimited"}:
        return None
    match = _SIZE.fullmatch(spoken)
    if match is None:
        raise ValueError(f"not a size: {text!r} (give bytes, or a number with K, M, G or T)")
    size = int(float(match.group(1)) * 1024 ** _UNITS[match.group(2).lower()])
    return size or None


def set_max_file_size(limit: int | None) -> None:
    """The process-wide cap, set once by the CLI from `--max-file-size`."""
    global _flag
    _flag = (limit,)


def max_file_size() -> int | None:
    """The cap in force: the CLI flag, else `AGENTLENS_MAX_FILE_SIZE`, else 1 GiB."""
    if _flag is not None:
        return _flag[0]
    from_env = os.environ.get(ENV)
    if from_env is None:
        return DEFAULT_MAX_FILE_SIZE
    try:
        return parse_size(from_env)
    except ValueError as exc:
        raise ConfigError(f"{ENV}: {exc}") from exc


def check_file_size(path: Path, size: int | None = None) -> None:
    """Raise a `TraceError` naming `path` when it is over the cap: `size`, the size of the file
    as opened (what `read_path` checks: the path may name another file by then), else the
    path's, when it is a regular file."""
    limit = max_file_size()
    if size is None:
        try:
            info = path.stat()
        except OSError:
            return  # opening it says why, in the usual words
        size = info.st_size if stat.S_ISREG(info.st_mode) else 0
    if limit is not None and size > limit:
        raise TraceError(
            path,
            f"file is {human(size)}, over the {human(limit)} input cap "
            f"(raise it with --max-file-size or {ENV})",
        )


def human(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    power = min(4, (size.bit_length() - 1) // 10)
    return f"{size / 1024**power:.1f} {('KiB', 'MiB', 'GiB', 'TiB')[power - 1]}"


def read_bounded(path: Path) -> bytes:
    """The bytes of a file a trace links to or sits beside (a sub-agent, a sidecar state), which
    the batch never named: only a regular file, and at most the cap (`bounded_read`). Raises an
    `OSError` (what every caller already answers) naming why."""
    limit = max_file_size()
    over = "" if limit is None else f"over the {human(limit)} input cap"
    return read_regular(path, limit, over)
