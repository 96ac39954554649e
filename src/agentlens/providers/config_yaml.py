"""YAML for files a user hands AgentLens (config, prices, scenarios): safe tags only, a key given
twice refused (the first value would be dropped silently), and alias expansion capped, so a
"billion laughs" file is one error line instead of gigabytes once something walks it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from agentlens.bounded_read import read_named
from agentlens.errors import ConfigError

MAX_NODES = 1_000_000
"""Values a document may expand to with its aliases followed (a real config has a few hundred)."""


class _Loader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, list | dict):
                continue  # unhashable: SafeLoader reports it
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} given twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def parse_yaml(text: str, where: str) -> Any:
    """Parsed YAML; any problem is a one-line `ConfigError` starting with `where` (and line)."""
    try:
        doc = yaml.load(text, Loader=_Loader)  # a SafeLoader subclass: no object tags
        size = _expanded_size(doc, {})
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"{where}:{mark.line + 1}" if mark is not None else where
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"{at}: not valid YAML ({problem})") from exc
    except RecursionError:
        raise ConfigError(f"{where}: not valid YAML (nested too deeply)") from None
    if size > MAX_NODES:
        raise ConfigError(
            f"{where}: its aliases expand to more than {MAX_NODES:,} values (a YAML bomb?)"
        )
    return doc


def read_yaml(path: Path) -> Any:
    """`parse_yaml` of a file: unreadable or non-UTF-8 files are one line naming it too."""
    try:
        data = read_named(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None
    return parse_yaml(text, str(path))


def _expanded_size(value: Any, sizes: dict[int, int]) -> int:
    """Number of values in `value` with shared (aliased) parts counted each time they appear;
    linear in the distinct values, so the count itself never expands anything."""
    if not isinstance(value, list | dict):
        return 1
    known = sizes.get(id(value))
    if known is not None:
        return known
    sizes[id(value)] = MAX_NODES + 1  # a cycle (`&a [*a]`) counts as too large
    children = value.values() if isinstance(value, dict) else value
    total = 1
    for child in children:
        total += _expanded_size(child, sizes)
        if total > MAX_NODES:
            break
    sizes[id(value)] = total
    return total
