"""JSON files in and out, for every package: `dump` writes the documents the commands hand each
other, `read_json` reads one back, `read_user_json` reads a file a person wrote (a scenario, a
fold) strictly. Every problem is one `ConfigError` naming the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from agentlens.bounded_read import read_named
from agentlens.errors import ConfigError


def dump(doc: dict[str, Any], path: str | Path | None = None) -> str:
    """`doc` as indented JSON; also written to `path` (its folder made) when given."""
    text = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text + "\n")
    return text


def read_json(path: str | Path) -> Any:
    """Parse a JSON file; an unreadable or malformed one is one line naming it."""
    try:
        data = read_named(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        return orjson.loads(data.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from exc


def read_user_json(path: Path) -> Any:
    """A JSON file a user wrote: a BOM is allowed; a key given twice, NaN / Infinity, bad UTF-8
    or nesting too deep is a one-line `ConfigError` naming the file."""
    try:
        text = read_named(path).decode("utf-8-sig")
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (offset {exc.start})") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid JSON: nested too deeply") from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc = dict(pairs)
    if len(doc) < len(pairs):
        twice = next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i]))
        raise ValueError(f"key {twice!r} given twice")
    return doc


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
