"""The paths a glob names, as `glob.glob(pattern, recursive=True)` finds them, except where a `**`
would go astray on a hostile folder.

`glob`'s `**` follows links to folders and nests a call per folder: a folder holding two links
to itself (`a -> .`, `b -> .`) made `runs/**/*.jsonl` try 2^40 paths (a hang), one link to
itself named every file 40 times (each a "read twice" failure), and a tree 1000 folders deep
stopped the command with a `RecursionError`. Here a `**` walks folders on a stack, by the
folder walk's own listing (`folder_listing`, as `load._walk`): never through a link to a
folder, and into a hidden folder only where the pattern names it (`**/.cache/*`), as in `glob`.
A folder the pattern names is named, and not looked into: the batch walks it, so naming what
lies below it too would read each of its files twice (`runs/**/*` names `runs/sub`, not also
`runs/sub/a.jsonl`; `**/trajectories` names each `trajectories` folder). A link to a folder the
pattern names is named too, for the batch to skip with its reason.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from fnmatch import fnmatchcase

from agentlens.formats.folder_listing import listing

STARS = "**"


def expand(pattern: str) -> Iterator[str]:
    """Every path `pattern` names, unsorted; a pattern without `**` is `glob.glob`'s."""
    parts = pattern.split(os.sep)
    if STARS not in parts:
        yield from glob.glob(pattern)
        return
    at = parts.index(STARS)
    # `/**/x` splits to ["", "**", "x"]: a head of only separators is the root, not ""
    head = os.sep.join(parts[:at]) or (os.sep if at else "")
    rest = parts[at:-1] if parts[-1] == "" else parts[at:]  # `runs/**/`: as `runs/**`
    if glob.has_magic(head):
        bases = glob.glob(head)
    else:  # "" for a pattern that starts with `**`: the working folder, named as `glob` names it
        bases = [head] if not head or os.path.lexists(head) else []
    for base in bases:
        if glob.has_magic(head) and os.path.islink(base) and os.path.isdir(base):
            yield base  # a link to a folder a wildcard met: skipped by the batch, not walked
        elif os.path.isdir(base or os.curdir):
            yield from _below(base, rest)


def _below(base: str, rest: list[str]) -> Iterator[str]:
    """The paths below `base` whose path from it `rest` matches, listed as the batch lists a
    folder (`folder_listing`); a folder is named whole (the batch walks it) or looked into only
    where `rest` may still match: so a hidden folder only where `rest` names it (`.cache`)."""
    start = _closure(frozenset({0}), rest)
    if base and len(rest) in start:  # `runs/**` names `runs` itself: walked whole
        yield base
        return
    folders: list[tuple[str, frozenset[int]]] = [(base, start)]
    while folders:
        folder, states = folders.pop()
        try:
            found = listing(folder or os.curdir, hidden=True)
        except OSError:
            continue
        for name in map(os.path.basename, (*found.files, *found.links)):
            if len(rest) in _closure(_step(states, name, rest), rest):
                yield os.path.join(folder, name)  # `glob`'s spelling: no `./` before it
        for name in map(os.path.basename, found.folders):
            after = _closure(_step(states, name, rest), rest)
            if len(rest) in after:
                yield os.path.join(folder, name)
            elif after:  # some of `rest` is still to match below it
                folders.append((os.path.join(folder, name), after))


def _step(states: frozenset[int], name: str, pattern: list[str]) -> frozenset[int]:
    """Which prefixes of `pattern` match once `name` is added to the path, from those (`states`,
    by length) that matched before it: a `**` takes any name that is not hidden and stays."""
    after = set()
    for at in states:
        if at == len(pattern):
            continue
        piece = pattern[at]
        if piece == STARS:
            if not name.startswith("."):
                after.add(at)
        elif _name_matches(name, piece):
            after.add(at + 1)
    return frozenset(after)


def _closure(states: frozenset[int], pattern: list[str]) -> frozenset[int]:
    """`states` and every prefix reached from one by letting each `**` stand for no folder."""
    reached = set(states)
    for at in sorted(states):
        while at < len(pattern) and pattern[at] == STARS:
            at += 1
            reached.add(at)
    return frozenset(reached)


def _name_matches(name: str, piece: str) -> bool:
    if not glob.has_magic(piece):
        return name == piece
    return (not name.startswith(".") or piece.startswith(".")) and fnmatchcase(name, piece)
