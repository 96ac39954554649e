"""The paths a glob names, as `glob.glob(pattern, recursive=True)` finds them, except where a `**`
would go astray on a hostile folder.

`glob`'s `**` follows links to folders and nests a call per folder: a folder holding two links
to itself (`a -> .`, `b -> .`) made `runs/**/*.jsonl` try 2^40 paths (a hang), one link to
itself named every file 40 times (each a "read twice" failure), and a tree 1000 folders deep
stopped the command with a `RecursionError`. Here a `**` walks folders on a stack, never
through a link to a folder (as a folder walk does: `load._walk`) nor into a hidden one (as
`glob` does not). A pattern that ends in `**` (or `**/`) names the files below, not the folders
too: each folder named would be walked, and every file in it read twice.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from fnmatch import fnmatchcase

STARS = "**"


def expand(pattern: str) -> Iterator[str]:
    """Every path `pattern` names, unsorted; a pattern without `**` is `glob.glob`'s."""
    parts = pattern.split(os.sep)
    if STARS not in parts:
        yield from glob.glob(pattern)
        return
    at = parts.index(STARS)
    head = os.sep.join(parts[:at])
    rest = parts[at:-1] if parts[-1] == "" else parts[at:]  # `runs/**/`: as `runs/**`
    if glob.has_magic(head):
        bases = glob.glob(head)
    else:  # "" for a pattern that starts with `**`: the working folder, named as `glob` names it
        bases = [head] if not head or os.path.lexists(head) else []
    for base in bases:
        if os.path.isdir(base or os.curdir):
            yield from _below(base, rest)


def _below(base: str, rest: list[str]) -> Iterator[str]:
    """The paths below `base` (itself included, as `glob` names it) that `rest` matches."""
    files_only = rest[-1] == STARS
    if base and not files_only and _matches([], rest):
        yield os.path.join(base, "")
    folders: list[tuple[str, list[str]]] = [(base, [])]
    while folders:
        folder, parts = folders.pop()
        try:
            with os.scandir(folder or os.curdir) as listing:
                entries = list(listing)
        except OSError:
            continue
        below = []
        for entry in entries:
            here = [*parts, entry.name]
            is_dir = _is_dir(entry)
            if is_dir and not entry.name.startswith(".") and not entry.is_symlink():
                below.append((os.path.join(folder, entry.name), here))
            if not (files_only and is_dir) and _matches(here, rest):
                yield os.path.join(folder, entry.name)
        folders += below


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _matches(parts: list[str], pattern: list[str]) -> bool:
    """Whether the path `parts` matches `pattern` component by component, a `**` standing for any
    number of folders that are not hidden; a wildcard matches no hidden name (as in `glob`).
    Which (part, pattern) prefixes match, one row of the table at a time: no recursion."""
    reach = [True] + [False] * len(parts)  # pattern[:0] matches parts[:0] only
    for piece in pattern:
        if piece == STARS:
            row, open_ = [], False
            for i, was in enumerate(reach):
                open_ = was or (open_ and not parts[i - 1].startswith("."))
                row.append(open_)
        else:
            row = [False] + [reach[i] and _name_matches(parts[i], piece) for i in range(len(parts))]
        reach = row
    return reach[-1]


def _name_matches(name: str, piece: str) -> bool:
    if not glob.has_magic(piece):
        return name == piece
    return (not name.startswith(".") or piece.startswith(".")) and fnmatchcase(name, piece)
