"""Files the CLI writes for the user (`report -o`, `store trajectory -o`): whole or not at all."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from agentlens.errors import ConfigError


def write_whole(path: Path, write: Callable[[BinaryIO], object], *, store: str) -> None:
    """`write(file)` into a file beside `path`, renamed over it once whole: a full disk leaves
    the previous file as it was, not half of the new one. A FIFO, a device or a symbolic link
    is written in place (renaming would replace the link, or `/dev/stdout`). `path` may not be
    the SQLite file of `store` (a slip of `-o results.db`)."""
    if path.exists() and Path(store).exists() and path.samefile(store):
        raise ConfigError(f"-o {path} is the store itself: give another file")
    path.parent.mkdir(parents=True, exist_ok=True)
    in_place = path.is_symlink() or (path.exists() and not path.is_file())
    partial = path if in_place else path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with partial.open("wb") as file:
            write(file)
        if not in_place:
            os.replace(partial, path)
    except BaseException as exc:  # a full disk, Ctrl-C, a bug: no half-written file left
        if not in_place:
            partial.unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            raise OSError(exc.errno, f"cannot write it ({exc.strerror})", str(path)) from exc
        raise
