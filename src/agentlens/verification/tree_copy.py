"""Copying and removing a tree an agent made: folders on a stack, against a deadline.

The repository a verifier copies is the agent's, and so are its depth and its number of
files. `shutil.copytree` and Python 3.11's `shutil.rmtree` nest a call per folder: a tree
1,500 folders deep made every verifier an error (`RecursionError`), and a test making one in
its copy left the copy on the host's disk. Nor did anything bound the copy's time: 200,000
one-byte files made a verifier with a 5 s timeout take 9 minutes."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

Skip = Callable[[str, list[str]], set[str]]
# Deeper than any project; what walks the copy after it (root's handing it to `nobody`, the
# report globs) nests a call per folder, and Python stops at 1,000
MAX_DEPTH = 256


class CopyTooDeepError(Exception):
    """A folder of the source lies deeper than MAX_DEPTH; nothing below it was copied."""


class CopyOutOfTimeError(Exception):
    """The deadline passed while copying; `copied` files were copied by then. Not an OSError:
    the walk gathers those and goes on. `copy_file` raises it too, in a file too large to copy
    in time."""

    def __init__(self, copied: int = 0) -> None:
        super().__init__(f"out of time after {copied} files")
        self.copied = copied


def copy_tree(
    source: Path,
    target: Path,
    *,
    skip: Skip,
    copy_file: Callable[[str, str], None],
    deadline: float,
) -> int:
    """`shutil.copytree(source, target, symlinks=True, ignore=skip, copy_function=copy_file)`,
    on a stack, raising CopyOutOfTimeError once `time.monotonic()` passes `deadline` and
    CopyTooDeepError at a folder deeper than MAX_DEPTH; the number of files copied. Links are
    copied as links; failures are gathered and raised as one `shutil.Error` at the end."""
    errors: list[tuple[str, str, str]] = []
    made: list[tuple[str, str]] = []
    copied = 0
    folders = [(str(source), str(target), 0)]
    while folders:
        from_dir, to_dir, depth = folders.pop()
        if depth > MAX_DEPTH:
            raise CopyTooDeepError(from_dir)
        try:
            entries = _entries(from_dir, to_dir, skip)
        except OSError as exc:
            if not made:  # the source itself: nothing to copy
                raise
            errors.append((from_dir, to_dir, str(exc)))
            continue
        made.append((from_dir, to_dir))
        for entry in entries:
            if time.monotonic() > deadline:
                raise CopyOutOfTimeError(copied)
            to_path = os.path.join(to_dir, entry.name)
            try:
                if entry.is_symlink():
                    os.symlink(os.readlink(entry.path), to_path)
                    shutil.copystat(entry.path, to_path, follow_symlinks=False)
                elif entry.is_dir():
                    folders.append((entry.path, to_path, depth + 1))
                else:
                    copy_file(entry.path, to_path)
                    copied += 1
            except CopyOutOfTimeError:  # in a large file: counted here
                raise CopyOutOfTimeError(copied) from None
            except OSError as exc:
                errors.append((entry.path, to_path, str(exc)))
    _stamp_folders(made, errors)
    if errors:
        raise shutil.Error(errors)
    return copied


def _entries(from_dir: str, to_dir: str, skip: Skip) -> list[os.DirEntry[str]]:
    """The entries of `from_dir` to copy, once `to_dir` is made for them."""
    with os.scandir(from_dir) as listing:
        entries = list(listing)
    skipped = skip(from_dir, [entry.name for entry in entries])
    os.mkdir(to_dir)
    return [entry for entry in entries if entry.name not in skipped]


def _stamp_folders(made: list[tuple[str, str]], errors: list[tuple[str, str, str]]) -> None:
    """Each folder's times and mode, deepest first: copying into a folder changes its time."""
    for from_dir, to_dir in reversed(made):
        try:
            shutil.copystat(from_dir, to_dir)
        except OSError as exc:
            errors.append((from_dir, to_dir, str(exc)))


def remove_tree(path: Path) -> None:
    """`shutil.rmtree`, or `rm -rf` (which walks without nesting calls) on a tree deeper than
    Python's recursion limit. Neither follows a link."""
    try:
        shutil.rmtree(path)
    except RecursionError:
        subprocess.run(["rm", "-rf", "--", str(path)], check=True, stdin=subprocess.DEVNULL)
