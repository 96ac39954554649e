"""Syntax errors of the languages ruff does not read (Java, JavaScript, TypeScript, Go, Rust),
from tree-sitter's parsers (`pip install 'agentlens[ide]'`): what an IDE marks red as you type.
An IDE would also mark unresolved names and type errors; those need the project's build (its
classpath, its `node_modules`), which a scenario's workspace need not have, so they are not shown.

Each tree-sitter `ERROR` node is one error ("syntax error at `…`", as far as the parser could
tell where), each `MISSING` node one too ("missing `;`"); nested errors inside an `ERROR` node
are its own and are not listed again."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from agentlens.redaction import masked_head

MAX_BYTES = 2_000_000
"""A larger file is not parsed (a generated bundle, not something an agent typed)."""
GRAMMARS: dict[str, tuple[str, str]] = {
    ".java": ("tree_sitter_java", "language"),
    ".js": ("tree_sitter_javascript", "language"),
    ".mjs": ("tree_sitter_javascript", "language"),
    ".cjs": ("tree_sitter_javascript", "language"),
    ".jsx": ("tree_sitter_javascript", "language"),
    ".ts": ("tree_sitter_typescript", "language_typescript"),
    ".tsx": ("tree_sitter_typescript", "language_tsx"),
    ".go": ("tree_sitter_go", "language"),
    ".rs": ("tree_sitter_rust", "language"),
}
"""File suffix -> (grammar package, the function that gives its language)."""
SNIPPET = 40


@dataclass(frozen=True)
class SyntaxFinding:
    line: int
    column: int
    message: str


def handles(name: str) -> bool:
    """Whether a file is one this module reads, with its grammar installed."""
    return _language(Path(name).suffix) is not None


def syntax_errors(path: Path) -> list[SyntaxFinding] | None:
    """The file's syntax errors in file order; None when it is too large to parse."""
    from tree_sitter import Parser

    language = _language(path.suffix)
    if language is None:
        return []
    with path.open("rb") as file:  # an agent's file may be as large as its sandbox allowed
        source = file.read(MAX_BYTES + 1)
    if len(source) > MAX_BYTES:
        return None
    tree = Parser(language).parse(source)  # a parser per file: pairs check in several threads
    if not tree.root_node.has_error:
        return []
    return [_finding(node) for node in _error_nodes(tree.root_node)]


def _error_nodes(root: Any) -> list[Any]:
    """ERROR and MISSING nodes, outermost first, without walking clean subtrees (a stack, not
    recursion: an agent's file may nest deeper than Python's recursion limit)."""
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found.append(node)
        elif node.has_error:
            stack.extend(reversed(node.children))
    return found


def _finding(node: Any) -> SyntaxFinding:
    row, column = node.start_point
    if node.is_missing:
        return SyntaxFinding(row + 1, column + 1, f"missing `{node.type}`")
    text = node.text.decode("utf-8", errors="replace").strip().split("\n", 1)[0]
    near = masked_head(text, SNIPPET) + ("…" if len(text) > SNIPPET else "")
    return SyntaxFinding(
        row + 1, column + 1, f"syntax error at `{near}`" if near else "syntax error"
    )


@cache
def _language(suffix: str) -> Any:
    """The suffix's tree-sitter language, or None without tree-sitter or the grammar."""
    grammar = GRAMMARS.get(suffix.lower())
    if grammar is None:
        return None
    try:
        from tree_sitter import Language

        module = importlib.import_module(grammar[0])
        return Language(getattr(module, grammar[1])())
    except (ImportError, AttributeError, ValueError):
        return None
