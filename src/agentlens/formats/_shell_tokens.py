"""Shell-like tokens of a command line, for `_categories`: words, operators, here-documents.

A regex, not `shlex`: ~10x faster, and forgiving of the unbalanced quotes agents write
(`a"b c"` becomes two words). It tokenizes; it never executes.
"""

from __future__ import annotations

import re

SEPARATORS = {"&&", "||", ";", "\n", "&", ";;", "(", ")"}
PIPES = {"|", "|&"}
REDIRECTS = {">", ">>", "<", ">&", "&>", ">|", "<>", "&>>", "<<", "<<-", "<<<", "<&"}
OPERATORS = SEPARATORS | REDIRECTS | PIPES
_WORD_CHAR = r"[^\s'\";|&()<>\\]"
# Unrolled loops (`a*(?:\\.a*)*`), not `(?:\\.|a)+`: Python's engine is several times faster on
# them. Words come first as the commonest token; a `#` can only open a comment at a token start.
# One group holds a token as written (a word, an operator, a quoted word with its quotes); a
# comment matches outside it, as an empty string.
TOKEN = re.compile(
    rf"((?:[^\s'\";|&()<>\\#]|\\.){_WORD_CHAR}*(?:\\.{_WORD_CHAR}*)*"
    r"|&&|\|\||;;|\|&|&>>|&>|>>|>&|<&|<<<|<<-|<<|>\||<>|[;|&()<>\n]"
    r"|'[^']*'?"
    r'|"[^"\\]*(?:\\.[^"\\]*)*"?)'
    r"|#[^\n]*"
)
# Without quotes, backslashes or comments a word is a run of non-operator characters: a simpler
# regex (an operator is told by its text).
PLAIN_TOKEN = re.compile(
    r"&&|\|\||;;|\|&|&>>|&>|>>|>&|<&|<<<|<<-|<<|>\||<>|[;|&()<>\n]|[^\s;|&()<>]+"
)
QUOTING = re.compile(r"['\"\\#]")
# Quoted words of a line without backslashes (the group keeps them in `split`'s result).
QUOTED = re.compile(r"""('[^']*'?|"[^"]*"?)""")
_MARKED = frozenset("'\"|&;<>()\n")  # what an operator or a quoted word starts with
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w.-]*)\1")


def words_and_operators(cmd: str) -> tuple[list[str], list[int]]:
    """The tokens of a line, quoted words unquoted (`unquote`), and the positions of its
    operators among them (a quoted `;` is a word). Comments are dropped."""
    if not QUOTING.search(cmd):
        words = PLAIN_TOKEN.findall(cmd)
        return words, [at for at, token in enumerate(words) if token in OPERATORS]
    if "#" not in cmd and "\\" not in cmd and not _has_any(cmd, "><|&;()"):
        return _between_quotes(cmd)
    words = TOKEN.findall(cmd)
    if "#" in cmd:
        words = [token for token in words if token]
    operators = []
    for at, token in enumerate(words):  # a word cannot start with an operator or a quote
        if token[0] in _MARKED:
            if token in OPERATORS:
                operators.append(at)
            else:
                words[at] = unquote(token)
    return words, operators


def _between_quotes(cmd: str) -> tuple[list[str], list[int]]:
    """`words_and_operators` of a line with quotes whose only operators are newlines and that has
    no backslash or comment (prose, mostly): a quote starts a token and ends one, so the text
    between quoted words splits with `str.split`, not one regex match a word."""
    words: list[str] = []
    operators: list[int] = []
    parts = QUOTED.split(cmd)
    for at, part in enumerate(parts):
        if at % 2:
            words.append(unquote(part))
        elif "\n" in part:
            lines = part.split("\n")
            words += lines[0].split()
            for line in lines[1:]:
                operators.append(len(words))
                words.append("\n")
                words += line.split()
        else:
            words += part.split()
    return words, operators


def quoted_words(cmd: str) -> list[str]:
    """The words of a line whose only shell syntax is quotes (no operator, newline, backslash
    or comment), as `words_and_operators` gives them: `str.split` between the quoted words."""
    parts = QUOTED.split(cmd)  # plain text, quoted word, plain text, ...
    words = parts[0].split()
    for at in range(1, len(parts), 2):
        words.append(unquote(parts[at]))
        words += parts[at + 1].split()
    return words


def _has_any(text: str, characters: str) -> bool:
    # `in` per character, not a regex class: a prose line holds none, and `in` scans it ~7x
    # faster; a loop, not `any()` over a generator, which costs more than it saves on short lines
    for character in characters:  # noqa: SIM110
        if character in text:
            return True
    return False


def unquote(token: str) -> str:
    """The word a quoted token stands for: quotes dropped (a missing closing one forgiven), `\\"`
    unescaped in double quotes."""
    quote = token[:1]
    if quote != "'" and quote != '"':
        return token
    text = token[1:-1] if len(token) > 1 and token[-1] == quote else token[1:]
    return text if quote == "'" else text.replace('\\"', '"')


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
