"""Here-documents (`cat <<EOF > f … EOF`): find them, and drop or cut out their bodies.

Two cuts for two readers of a line. `strip_heredocs` drops the bodies so that a command line
classifies (and caches) like a short one (`categories`). `cut_heredocs` keeps each body apart
and leaves a numbered marker where it was fed, so that what a program was fed can be looked at
(`actions`: the Python a `python <<EOF` runs, the script a `cat > fix.py <<EOF` writes).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w.-]*)\1")
MARKER = re.compile(r"__HEREDOC(\d+)__")


def cut_heredocs(command: str, first: int = 0) -> tuple[str, list[str]]:
    """The line with each heredoc body cut out, a marker `__HEREDOC<n>__` left where it was fed,
    and the bodies in order; markers count from `first` (a nested `bash -c '…'` continues the
    numbering of the line it sits in, whose bodies it can hold)."""
    kept: list[str] = []
    bodies: list[str] = []
    lines = command.split("\n")
    i = 0
    while i < len(lines):
        header = lines[i]
        i += 1
        for match in HEREDOC.finditer(header):
            body: list[str] = []
            while i < len(lines) and lines[i].strip() != match[2]:
                body.append(lines[i])
                i += 1
            i += 1
            bodies.append("\n".join(body))
        if len(bodies) and HEREDOC.search(header):
            marker = f" __HEREDOC{first + len(bodies) - 1}__ "
            header = HEREDOC.sub(marker, header, count=1)
        kept.append(header)
    return "\n".join(kept), bodies


def fed_body(text: str, bodies: Sequence[str]) -> str:
    """The body of the first heredoc marker in `text`, or "" (none, or a marker the agent typed
    itself, which names no body)."""
    marker = MARKER.search(text)
    if marker is None:
        return ""
    number = int(marker[1])
    return bodies[number] if number < len(bodies) else ""


def strip_heredocs(text: str) -> str:
    """Drop here-document bodies; the opening `<<EOF` becomes `<< ''`, so stripping twice is
    harmless and a long `cat <<EOF > f` line analyses (and caches) like a short one."""
    if "<<" not in text:
        return text
    out: list[str] = []
    position = 0
    while (match := HEREDOC.search(text, position)) is not None:
        line_end = text.find("\n", match.end())
        out += [text[position : match.start()], "<< ''"]
        if line_end < 0:
            return "".join([*out, text[match.end() :]])
        out.append(text[match.end() : line_end + 1])
        closing = _closing_line(text, match[2], line_end + 1)
        if closing < 0:  # an unterminated body runs to the end
            return "".join(out)
        position = closing
    out.append(text[position:])
    return "".join(out)


def _closing_line(text: str, word: str, start: int) -> int:
    """End of the first line from `start` that holds only `word` (tabs/spaces around), or -1.
    `str.find`, not a MULTILINE regex: bodies are whole files, and this is ~20x faster."""
    at = text.find(word, start)
    while at >= 0:
        line_start = text.rfind("\n", start - 1, at) + 1 if at > start else start
        line_end = text.find("\n", at)
        line_end = len(text) if line_end < 0 else line_end
        if text[line_start:line_end].strip(" \t") == word:
            return line_end
        start = line_end + 1  # another `word` on this line cannot make it hold only `word`
        at = text.find(word, start)
    return -1
