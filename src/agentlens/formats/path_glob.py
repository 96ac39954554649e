"""The paths a glob names, as `glob.glob(pattern, recursive=True)` finds them, except where it
would go astray on a hostile folder.

The part before the first wildcard is the user's own path, followed as written, links too (as a
folder named on the command line is walked). From the first wildcard on, the pattern is matched
a piece at a time, by the folder walk's own listing (`folder_listing`, as `load._walk`), and
through no link to a folder, whether a wildcard (`runs/*/y`) or a fixed name after one
(`runs/*/y/*`) meets it: `glob` followed `runs/task1/y -> /` and read outside the folder named.
Such a link is named instead, for the batch to skip with its reason ("a link to a folder, not
followed"); so is a folder that cannot be listed, for the batch to say why (`glob` left it out
without a word).

`glob`'s `**` also nests a call per folder: a folder holding two links to itself (`a -> .`,
`b -> .`) made `runs/**/*.jsonl` try 2^40 paths (a hang), one link to itself named every file
40 times (each a "read twice" failure), and a tree 1000 folders deep stopped the command with a
`RecursionError`. Here a `**` walks folders on a stack, and into a hidden folder only where the
pattern names it (`**/.cache/*`), as in `glob`. A folder the pattern names is named, and not
looked into: the batch walks it whole, so naming what lies below it too would read each of its
files twice (`runs/**/*` names `runs/sub`, not also `runs/sub/a.jsonl`; `**/trajectories` names
each `trajectories` folder, and none inside another).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from fnmatch import fnmatchcase

from agentlens.formats.folder_listing import listing

STARS = "**"


def expand(pattern: str) -> Iterator[str]:
    """Every path `pattern` names, unsorted; a pattern without wildcards is `glob.glob`'s. A
    pattern that ends in a separator names folders only (and links to them), as in `glob`."""
    parts = pattern.split(os.sep)
    at = _first_wildcard(parts)
    if at == len(parts):
        yield from glob.glob(pattern)
        return
    rest = [part for part in parts[at:] if part]  # `a/*//b` is `a/*/b`
    found = _matched(typed_part(pattern), rest)
    folders_only = parts[-1] == ""
    yield from (path for path in found if not folders_only or os.path.isdir(path))


def typed_part(pattern: str) -> str:
    """The folder `pattern` names before its first wildcard, as typed: the user's own path,
    followed where it is a link ("" for the working folder)."""
    parts = pattern.split(os.sep)
    at = _first_wildcard(parts)
    # `/*/x` splits to ["", "*", "x"]: a head of only separators is the root, not ""
    return os.sep.join(parts[:at]) or (os.sep if at else "")


def _first_wildcard(parts: list[str]) -> int:
    return next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))


def _matched(head: str, rest: list[str]) -> Iterator[str]:
    """The paths below the folder `head` whose path from it `rest` matches. A path that a piece
    of `rest` matched is looked into only if it is a folder and no link (one that is, is named:
    the batch skips it with its reason); from a `**` on, `_below` walks. A folder that cannot be
    listed is named, for the batch to say why (`glob` left it out without a word); one that
    cannot be searched for a fixed name, by the path that name would be (`_unsearched`)."""
    pending = [(head, 0)]  # a path and how many pieces of `rest` it matched
    while pending:
        path, done = pending.pop()
        if done == len(rest):
            yield path
        elif done and os.path.islink(path):  # matched by the pattern, not named by the user
            if os.path.isdir(path):
                yield path
        elif not os.path.isdir(path or os.curdir):
            continue  # a file where the pattern goes on: nothing below it
        elif rest[done] == STARS:
            yield from _below(path, rest[done:])
        else:
            try:
                pending += ((found, done + 1) for found in _in_folder(path, rest[done]))
            except OSError:
                yield _unsearched(path, rest[done])


def _unsearched(folder: str, piece: str) -> str:
    """What stands for a folder that cannot be listed, or searched for the fixed name `piece`:
    the path that name would be (`runs/noexec/s.json`), so that reading it names what the user
    asked for; naming the folder, the batch walked it and failed every file it lists."""
    if not glob.has_magic(piece):
        return os.path.join(folder, piece)
    return folder or os.curdir


def _in_folder(folder: str, piece: str) -> list[str]:
    """The paths in `folder` that `piece` (one name of a pattern) matches, spelled as `glob`
    spells them (no `./` before them). Raises an `OSError` for a folder that cannot be listed
    (or searched, for a fixed name)."""
    if not glob.has_magic(piece):  # a fixed name: looked up, not listed (`..` too, as in `glob`)
        path = os.path.join(folder, piece)
        return [path] if _exists(path) else []
    found = listing(folder or os.curdir, hidden=True)
    names = map(os.path.basename, (*found.files, *found.links, *found.folders))
    return [os.path.join(folder, name) for name in names if _name_matches(name, piece)]


def _exists(path: str) -> bool:
    """Whether `path` exists, as `os.path.lexists` says; raises a `PermissionError` where the
    folder it is in may not be searched."""
    try:
        os.lstat(path)
    except PermissionError:
        raise
    except (OSError, ValueError):
        return False
    return True


def _below(base: str, rest: list[str]) -> Iterator[str]:
    """The paths below `base` whose path from it `rest` matches, listed as the batch lists a
    folder (`folder_listing`); a folder is named whole (the batch walks it) or looked into only
    where `rest` may still match: so a hidden folder only where `rest` names it (`.cache`). A
    link to a folder that `rest` matches, or would have been walked through, is named."""
    start = _closure(frozenset({0}), rest)
    if base and len(rest) in start:  # `runs/**` names `runs` itself: walked whole
        yield base
        return
    folders: list[tuple[str, frozenset[int]]] = [(base, start)]
    while folders:
        folder, states = folders.pop()
        try:
            found = listing(folder or os.curdir, hidden=True)
        except OSError:  # named, for the batch to say why
            yield folder or os.curdir
            continue
        for name in map(os.path.basename, found.files):
            if len(rest) in _closure(_step(states, name, rest), rest):
                yield os.path.join(folder, name)  # `glob`'s spelling: no `./` before it
        for name in map(os.path.basename, found.links):
            if _step(states, name, rest):  # named, matched or to be walked: skipped, with why
                yield os.path.join(folder, name)
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
