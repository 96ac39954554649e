"""What a folder holds, as every walk of the input sees it: the folder walk (`load._walk`) and a
glob's `**` (`path_glob`) list folders by this one rule, so they cannot disagree on what a
folder, a file or a link to a folder is."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


class Listing(NamedTuple):
    """The paths in a folder, each list sorted by name."""

    files: list[str]
    """Anything that is not a folder: files, FIFOs, devices, broken links, link loops."""
    links: list[str]
    """Links to folders: never walked, and named so that the batch says it skipped them."""
    folders: list[str]
    """Folders to walk into."""


def listing(folder: str, *, hidden: bool = False) -> Listing:
    """The paths in `folder`; hidden folders and hidden links to folders only with `hidden` (a
    glob that names a hidden folder walks into it). Raises an `OSError` for a folder that
    cannot be listed."""
    found = Listing([], [], [])
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if not is_dir(entry):
                found.files.append(entry.path)
            elif hidden or not entry.name.startswith("."):
                (found.links if entry.is_symlink() else found.folders).append(entry.path)
    return found


def is_dir(path: Path | os.DirEntry[str]) -> bool:
    """`path.is_dir()`, False where it raises (a name too long for the file system): reading
    the path then says why, as that file's one line."""
    try:
        return path.is_dir()
    except OSError:
        return False
