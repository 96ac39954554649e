"""Tokens of a shell line: words, operators, quotes. It tokenizes; it never executes.

Two word splitters, one per reader of a line, because each profile's labels depend on its own:
* `words_and_operators` (`categories`, the readers' step categories): a regex, ~10x faster than
  `shlex` and forgiving of the unbalanced quotes agents write (`a"b c"` becomes two words);
* `split_outside_quotes` then `posix_words` (`actions`, the `paper` labeler): the line cut at
  chosen operators outside quotes, then each piece split as POSIX `shlex` does.
"""

from __future__ import annotations

import re
import shlex

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
# What makes shlex differ from `str.split`: quotes, backslashes, and whitespace that `str.split`
# splits on but shlex keeps inside a word (\v, \f, \x1c-\x1f, \x85, Unicode spaces).
SHLEX_SPECIAL = re.compile(r"['\"\\]|[^\S \t\r\n]")
# A quoted run (to its closing quote, or the end) or a character that can start an operator.
QUOTED_OR_OPERATOR = re.compile(r"'[^']*'?|\"[^\"]*\"?|[&|;\n]")
_MARKED = frozenset("'\"|&;<>()\n")  # what an operator or a quoted word starts with


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


def split_outside_quotes(text: str, operators: tuple[str, ...]) -> list[str]:
    """`text` cut at `operators` outside quotes (`||` is not a pipe, `>&`/`&>` not a `&`), each
    piece stripped, empty pieces dropped. Only quoted runs and operator characters are visited
    (one regex), not every character."""
    parts: list[str] = []
    start = resume = 0
    for match in QUOTED_OR_OPERATOR.finditer(text):
        i = match.start()
        if i < resume or match[0][0] in "'\"":  # inside an operator just cut, or quoted
            continue
        op = next((o for o in operators if text.startswith(o, i)), None)
        if op and not (op == "|" and text.startswith("||", i)) and not _is_redirect_amp(text, i):
            parts.append(text[start:i])
            start = resume = i + len(op)
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _is_redirect_amp(text: str, i: int) -> bool:
    return text[i] == "&" and (text[i - 1 : i] == ">" or text[i + 1 : i + 2] == ">")


def posix_words(text: str) -> list[str]:
    """`shlex.split` (POSIX, no comments), unbalanced quotes falling back to whitespace. Without
    quotes or backslashes, and with no whitespace but shlex's own, that is `str.split`: ~20x
    faster than shlex's per-character loop, and most lines take this path."""
    if not SHLEX_SPECIAL.search(text):
        return text.split()
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:
        return text.split()
