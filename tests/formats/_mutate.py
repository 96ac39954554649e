"""Structure-aware mutation of real trace files for the reader fuzz tests.

A sample is parsed once into a `Parsed` document: the JSON value of a `.json` file, the list of
line values of a `.jsonl` file, or a `{member: value}` dict of an Inspect `.eval` zip's JSON
members. A mutation picks a nested position (depth first, so top-level structure is hit as often
as deep leaves), applies one edit there and re-serialises. Containers on the path are copied
shallowly, so the cached original is never changed and a mutant costs one path, not a deep copy.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

Position = tuple[Any, ...]

# One value of every JSON type, plus the awkward ones: a huge int (orjson reads it as a float),
# a long string, a backslash run, deep nesting.
REPLACEMENTS: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**70,
    1.5,
    -1e308,
    "",
    "x" * 5000,
    "\\" * 2000 + "'\"`",
    "2024-13-45T99:99:99Z",
    [],
    {},
    [[[[[[[[[[[]]]]]]]]]]],
    {"a": {"b": {"c": [None, 1, "z"]}}},
]


@dataclass(frozen=True)
class Parsed:
    kind: str  # "json", "jsonl" or "zip"
    value: Any
    by_depth: tuple[tuple[Position, ...], ...]  # every position, grouped by depth (0 = the root)
    members: dict[str, bytes]  # zip members that are not JSON, kept verbatim


def parse(path: Path, data: bytes) -> Parsed:
    members: dict[str, bytes] = {}
    if data.startswith(b"PK\x03\x04"):
        kind, value = "zip", {}
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for name in archive.namelist():
                raw = archive.read(name)
                if name.endswith(".json"):
                    value[name] = json.loads(raw)
                else:
                    members[name] = raw
    elif path.suffix == ".jsonl":
        kind, value = "jsonl", [json.loads(line) for line in data.splitlines() if line.strip()]
    else:
        kind, value = "json", json.loads(data)
    return Parsed(kind, value, _positions(value), members)


def serialise(parsed: Parsed, value: Any) -> bytes:
    if parsed.kind == "jsonl":
        return b"\n".join(_dumps(line) for line in value) + b"\n"
    if parsed.kind == "json":
        return _dumps(value)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, raw in parsed.members.items():
            archive.writestr(name, raw)
        for name, member in value.items():
            archive.writestr(name, _dumps(member))
    return out.getvalue()


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", errors="surrogatepass")


def _positions(root: Any) -> tuple[tuple[Position, ...], ...]:
    levels: list[list[Position]] = []
    stack: list[tuple[Position, Any]] = [((), root)]
    while stack:
        position, value = stack.pop()
        while len(levels) <= len(position):
            levels.append([])
        levels[len(position)].append(position)
        if isinstance(value, dict):
            stack += [((*position, k), v) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [((*position, i), v) for i, v in enumerate(value)]
    return tuple(tuple(sorted(level, key=repr)) for level in levels)


@st.composite
def mutant(draw: st.DrawFn, parsed: Parsed) -> tuple[bytes, list[str]]:
    """1-3 edits of the document, re-serialised; also returns what was done (for the report)."""
    value = parsed.value
    done: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        depth = draw(st.integers(1, len(parsed.by_depth) - 1)) if len(parsed.by_depth) > 1 else 0
        position = draw(st.sampled_from(parsed.by_depth[depth]))
        op = draw(st.sampled_from(["replace", "delete", "duplicate"]))
        replacement = draw(st.sampled_from(REPLACEMENTS)) if op == "replace" else None
        value, what = edit(value, position, op, replacement)
        done.append(what)
    return serialise(parsed, value), done


def edit(root: Any, position: Position, op: str, replacement: Any) -> tuple[Any, str]:
    """Apply one edit at `position` (copying the containers on the path); positions that an
    earlier edit removed are left alone."""
    if not position:
        return replacement, f"root <- {_short(replacement)}"
    copies = [_copy(root)]
    for key in position[:-1]:
        parent = copies[-1]
        if not _has(parent, key):
            return root, f"{list(position)}: gone"
        parent[key] = _copy(parent[key])
        copies.append(parent[key])
    parent, key = copies[-1], position[-1]
    if not _has(parent, key):
        return root, f"{list(position)}: gone"
    if op == "delete":
        del parent[key]
    elif op == "duplicate" and isinstance(parent, list):
        parent.insert(key, parent[key])
    elif op == "duplicate":  # a dict value: wrap it in a list of two copies
        parent[key] = [parent[key], parent[key]]
    else:
        parent[key] = replacement
    return copies[0], f"{list(position)} {op} {_short(replacement) if op == 'replace' else ''}"


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value


def _has(container: Any, key: Any) -> bool:
    if isinstance(container, dict):
        return key in container
    return isinstance(container, list) and isinstance(key, int) and 0 <= key < len(container)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 40 else f"{text[:30]}…({len(text)} chars)"
