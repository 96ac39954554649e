"""Reading the report back with the standard library's HTML parser: its tables, headline cards,
and a check that elements nest and close."""

from __future__ import annotations

from html.parser import HTMLParser

VOID = {"meta", "br", "hr", "img", "input", "link", "rect", "line", "path", "circle"}
"""Elements written without a closing tag (SVG shapes self-close: `<line …/>`)."""


class Tree(HTMLParser):
    """Records every start tag with its attributes, and checks nesting as it goes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.tables: list[list[list[str]]] = []
        self.cards: list[tuple[str, str]] = []
        self._cell: list[str] | None = None
        self._card: list[str] = []
        self._in: list[str] = []
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._text = ""
        cls = dict(attrs).get("class") or ""
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        if tag not in VOID:
            self.stack.append(tag)
            self._in.append(cls)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()
        cls = self._in.pop()
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        if cls in ("value", "label"):
            self._card.append(self._text.strip())
            if len(self._card) == 2:
                self.cards.append((self._card[1], self._card[0]))
                self._card = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        self._text = data


def parse(document: str) -> Tree:
    tree = Tree()
    tree.feed(document)
    tree.close()
    return tree


def find_table(tree: Tree, first_header: str, second_header: str | None = None) -> list[list[str]]:
    """The first table whose header row starts with these column names (header row first)."""
    for rows in tree.tables:
        head = rows[0] if rows else []
        if head[:1] == [first_header] and (second_header is None or head[1:2] == [second_header]):
            return rows
    raise AssertionError(f"no table with header {first_header!r}, {second_header!r}")


def card_groups(tree: Tree) -> list[dict[str, str]]:
    """Headline cards, one dict per group (a group starts again at 'trajectories')."""
    groups: list[dict[str, str]] = []
    for label, value in tree.cards:
        if label == "trajectories" or not groups:
            groups.append({})
        groups[-1][label] = value
    return groups
