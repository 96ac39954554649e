"""File names made from trace text (a trajectory id, an input file's stem): the one place such
text becomes part of a path. Characters outside `[A-Za-z0-9._@+-]` become `_`; no name is `.`,
`..` or hidden; a name longer than `MAX_STEM` is cut and ends with a digest of the whole text,
so a file system that takes 255 bytes a name takes it (suffixes included) and two long ids that
share a beginning still get two files."""

from __future__ import annotations

import hashlib
import re

UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]+")
MAX_STEM = 200  # leaves room for `-N` and `.otlp.json` in the 255 bytes a name may take
DIGEST = 12


def file_stem(text: str, fallback: str) -> str:
    """`text` as a file name's stem (`fallback` when nothing of it is left)."""
    stem = UNSAFE.sub("_", text).strip("._") or fallback
    if len(stem) <= MAX_STEM:
        return stem
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST]
    return f"{stem[: MAX_STEM - DIGEST - 1].rstrip('._')}-{digest}"


class FileStems:
    """Stems made safe (`file_stem`), each once: a repeat gets `-2`, `-3`… in the order texts
    come, past any name a text of its own took (ids `a`, `a-2`, `a`)."""

    def __init__(self, fallback: str) -> None:
        self.fallback = fallback
        self.taken: set[str] = set()
        self.next: dict[str, int] = {}

    @property
    def count(self) -> int:
        return len(self.taken)

    def add(self, text: str) -> str:
        stem = file_stem(text, self.fallback)
        number = self.next.get(stem, 1)
        name = stem if number == 1 else f"{stem}-{number}"
        while name in self.taken:
            number += 1
            name = f"{stem}-{number}"
        self.next[stem] = number + 1
        self.taken.add(name)
        return name
