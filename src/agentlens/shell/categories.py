"""The `ToolCategory` of a shell command line, and the files it names: the readers' rules.

Every reader classifies a shell line through this module, so a `cat` run through OpenHands'
`execute_bash`, SWE-agent's action string or a mini-swe-agent bash block all count as
`read_file`. Classification is best effort on hostile text: it tokenizes, it never executes.

Rules for a shell line (`categorize_command`):
* the line is split into commands at `&&`, `||`, `;` and newlines; `cd`, `export`, `source`, ... are skipped;
* a pipeline takes the category of its first command, except that a read/list feeding `grep` is a
  search (`ls -R | grep x`) and feeding any other program (`cat x | python`) is a run;
* `cat > f <<EOF` / `echo .. > f` write a file (create_file; `>>` is an edit); `sed -i` / `perl -i` edit;
* when a line mixes commands, the strongest wins: create/edit > run > search > read > list.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agentlens.shell.heredocs import strip_heredocs
from agentlens.shell.programs import LISTERS, PREFIXES, READERS, SEARCHERS
from agentlens.shell.tokens import PIPES, REDIRECTS, quoted_words, words_and_operators
from agentlens.trajectory import ToolCategory

# Programs that only reshape a previous command's output; they do not change a pipeline's category.
FILTERS = {"head", "tail", "wc", "sort", "uniq", "cut", "tr", "awk", "less", "more", "nl", "column"}
FILTERS |= {"grep", "egrep", "fgrep", "rg", "cat", "xargs", "tee", "sed"}
NEUTRAL = {"cd", "pushd", "popd", "export", "source", ".", "set", "unset", "true", "alias", "clear"}
IN_PLACE = ("-i", "--in-place")
FIND_SEARCH_FLAGS = {"-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-wholename"}
STRENGTH = [
    ToolCategory.CREATE_FILE,
    ToolCategory.EDIT,
    ToolCategory.RUN_COMMAND,
    ToolCategory.SEARCH,
    ToolCategory.READ_FILE,
    ToolCategory.LIST_DIR,
]
RANK = {category: rank for rank, category in enumerate(STRENGTH)}
BY_PROGRAM = {
    **dict.fromkeys(LISTERS, ToolCategory.LIST_DIR),
    **dict.fromkeys(READERS, ToolCategory.READ_FILE),
    **dict.fromkeys(SEARCHERS, ToolCategory.SEARCH),
}
WRITE_OPERATORS = {">", ">>", ">|", "&>", "&>>"}
WRITERS = {"cat", "echo", "printf", "tee", ""}  # a redirection makes them create or edit a file
# the programs whose category depends on more than their name
SPECIAL_PROGRAMS = NEUTRAL | WRITERS | {"sed", "perl", "find", "git", "patch", "touch"}
OPERAND_FILES = READERS | LISTERS | {"touch", "rm", "cp", "mv", "mkdir"}
FIND_SED = {"find", "sed"}
INSPECTING = (ToolCategory.SEARCH, ToolCategory.READ_FILE, ToolCategory.LIST_DIR)
# the commonest category as a global: `ToolCategory.RUN_COMMAND` costs ~10x a global's look-up
RUN_COMMAND = ToolCategory.RUN_COMMAND
CACHED_LENGTH = 1024
ANALYSED_LENGTH = 4096  # a longer line is judged on its start (pasted prose, not commands)
SHELL_SYNTAX = re.compile(r"[|&;<>()'\"\n#\\]")  # what makes a line more than split words
COMPOUND = re.compile(r"[|&;<>()\n#\\]")  # what can make an operator or a comment
SOURCE_SUFFIXES = [
    "py", "pyi", "js", "jsx", "ts", "tsx", "java", "kt", "scala", "c", "h", "cc", "cpp", "hpp",
    "go", "rs", "rb", "php", "sh", "pony", "cs", "swift", "json", "yaml", "yml", "toml", "ini",
    "cfg", "txt", "md", "rst", "html", "css", "xml", "csv", "sql", "lock", "gradle",
]  # fmt: skip
SOURCE_SUFFIX = rf"\.({'|'.join(SOURCE_SUFFIXES)})"
SOURCE_FILE = re.compile(rf"^[\w./-]+{SOURCE_SUFFIX}$")
# what any operand SOURCE_FILE matches ends with, in operands joined by NULs (`$` allows a newline)
SOURCE_END = re.compile(rf"{SOURCE_SUFFIX}\n?\0")


def categorize_command(cmd: str) -> ToolCategory:
    """Classify one shell command line (see the module docstring for the rules)."""
    return _analyse(cmd.strip())[0]


def analyse_command(cmd: str) -> tuple[ToolCategory, list[str]]:
    """`categorize_command` and `files_in_command` of one line, from a single look-up."""
    category, files = _analyse(cmd.strip())
    return category, list(files)


def files_in_command(cmd: str) -> list[str]:
    """Best-effort list of the files a shell line reads, lists, searches or writes, in order."""
    return list(_analyse(cmd.strip())[1])


def _analyse(cmd: str) -> tuple[ToolCategory, tuple[str, ...]]:
    """Category and files of one command line, from a single tokenization. Here-document bodies
    are dropped first; what is left is cached when short (agents repeat commands, and several
    readers and scorers classify the same line), so the cache's memory stays bounded. A short
    line is also cached as given, so a repeat skips the here-document scan."""
    if len(cmd) <= CACHED_LENGTH:
        return _analyse_given(cmd)
    return _analyse_text(cmd)


@lru_cache(maxsize=8192)
def _analyse_given(cmd: str) -> tuple[ToolCategory, tuple[str, ...]]:
    return _analyse_text(cmd)


def _analyse_text(cmd: str) -> tuple[ToolCategory, tuple[str, ...]]:
    # `in` before `replace`: a search is several times faster on long bodies
    joined = cmd.replace("\\\n", " ") if "\\\n" in cmd else cmd
    text = strip_heredocs(joined)[:ANALYSED_LENGTH]
    if text is cmd and len(cmd) <= CACHED_LENGTH:  # nothing dropped: `_analyse_given` caches it
        return _analyse_line(text)
    if len(text) <= CACHED_LENGTH:
        return _analyse_short(text)
    global _last_long
    last = _last_long  # one tuple, swapped whole: safe if threads share the module
    if last[0] == text:  # readers ask for the category, then the files, of one line
        return last[1]
    result = _analyse_line(text)
    _last_long = (text, result)
    return result


_last_long: tuple[str, tuple[ToolCategory, tuple[str, ...]]] = ("", (ToolCategory.OTHER, ()))


@lru_cache(maxsize=8192)
def _analyse_short(cmd: str) -> tuple[ToolCategory, tuple[str, ...]]:
    return _analyse_line(cmd)


def _analyse_line(cmd: str) -> tuple[ToolCategory, tuple[str, ...]]:
    """Category and files of one line, here-documents already dropped."""
    if not SHELL_SYNTAX.search(cmd):  # one plain command (`ls -la src`): no tokenizer needed
        category, files = _lone_command(cmd.split())
        return category, tuple(dict.fromkeys(files) if len(files) > 1 else files)
    if not COMPOUND.search(cmd):  # quotes are its only syntax (`grep -n "def f" a.py`)
        category, files = _lone_command(_extend([], quoted_words(cmd), True))
        return category, tuple(files)
    words, operators = words_and_operators(cmd)
    if not operators:  # one command with quoted words
        category, files = _lone_command(_extend([], words, "" in words))
        return category, tuple(files)
    return _analyse_compound(words, operators)


def _lone_command(words: list[str]) -> tuple[ToolCategory, list[str]]:
    """Category and files of a line of one command without redirections."""
    program, args = _split_program(words)
    category = _command_category(program, args, []) or RUN_COMMAND
    return category, _command_files(program, args)


Parsed = tuple[str, list[str], list[tuple[str, str]]]
"""A simple command as (program, arguments, file redirections that write)."""


def _parse(words: list[str], targets: list[tuple[str, str]]) -> Parsed:
    program, args = _split_program(words)
    return program, args, _written(targets) if targets else []


def _analyse_compound(
    words: list[str], operators: list[int]
) -> tuple[ToolCategory, tuple[str, ...]]:
    """Category and files of a line of pipelines, from its words and the positions of its
    operators: the words between two operators join the current command (a slice, not a step per
    word); a separator ends a pipeline, a pipe a command; a redirection takes the next token, even
    an operator, as its target. Commands with neither words nor redirections, and pipelines of
    only those, are skipped."""
    category, rank = RUN_COMMAND, len(STRENGTH)
    files: list[str] = []
    pipeline: list[Parsed] = []
    command: list[str] = []
    targets: list[tuple[str, str]] = []
    empties = "" in words
    start = 0
    for at in operators:
        if at < start:  # an operator taken as a redirection's target
            continue
        if at > start:
            command = _extend(command, words[start:at], empties)
        token = words[at]
        start = at + 1
        if token in REDIRECTS:
            if command and command[-1].isdigit():
                command.pop()
            if start < len(words):
                targets.append((token, words[start]))
                start += 1
            continue
        if command or targets:
            pipeline.append(_parse(command, targets))
            command, targets = [], []
        if token not in PIPES and pipeline:
            category, rank = _settle(pipeline, category, rank, files)
            pipeline = []
    if start < len(words):
        command = _extend(command, words[start:], empties)
    if command or targets:
        pipeline.append(_parse(command, targets))
    if pipeline:
        category, rank = _settle(pipeline, category, rank, files)
    return category, tuple(files)


def _extend(command: list[str], words: list[str], empties: bool) -> list[str]:
    """`command` with `words` added, less empty words and the command's leading `X=1`."""
    if empties and "" in words:
        words = [word for word in words if word]
    if command:
        command += words
        return command
    if words and "=" not in words[0]:  # the common case: no assignment to drop
        return words
    for at, word in enumerate(words):
        if not _is_assignment(word):
            return words[at:]
    return command


def _settle(
    pipeline: list[Parsed], category: ToolCategory, rank: int, files: list[str]
) -> tuple[ToolCategory, int]:
    """Fold one pipeline into the line's (category, rank) so far; its files join `files`."""
    found = _pipeline_category(pipeline) if len(pipeline) > 1 else _command_category(*pipeline[0])
    if found is not None and RANK[found] < rank:  # the first of the strongest
        category, rank = found, RANK[found]
    for program, args, writes in pipeline:
        named = _command_files(program, args)
        if writes:
            named = [name for _, name in writes] + named
        if named:  # a name the line already has is not repeated (one the command repeats is)
            files += [f for f in named if f not in files] if files else named
    return category, rank


def _written(targets: list[tuple[str, str]]) -> list[tuple[str, str]]:
    writes = []
    for op, name in targets:  # a loop: a command has one or two redirections
        if op in WRITE_OPERATORS and not name.startswith("/dev/"):
            writes.append((op, name))
    return writes


def _pipeline_category(pipeline: list[Parsed]) -> ToolCategory | None:
    category = _command_category(*pipeline[0])
    if category is None:
        return None
    for program, args, writes in pipeline[1:]:
        later = _command_category(program, args, writes)
        if later is ToolCategory.SEARCH and category in INSPECTING[1:]:
            category = ToolCategory.SEARCH
        elif program in FILTERS:
            continue
        elif later in (ToolCategory.CREATE_FILE, ToolCategory.EDIT):
            category = later
        elif category in INSPECTING:
            category = ToolCategory.RUN_COMMAND
    return category


def _command_category(
    program: str, args: list[str], writes: list[tuple[str, str]]
) -> ToolCategory | None:
    if program not in SPECIAL_PROGRAMS:  # no rule names it: the rules would end at BY_PROGRAM
        return BY_PROGRAM.get(program, RUN_COMMAND)
    return _category_by_rules(program, args, writes)


def _category_by_rules(
    program: str, args: list[str], writes: list[tuple[str, str]]
) -> ToolCategory | None:
    """Every category rule in order, for any program (`_command_category` skips them for the
    programs outside SPECIAL_PROGRAMS, which none of them names)."""
    if program in NEUTRAL:
        return None
    if writes and program in WRITERS:
        return ToolCategory.EDIT if writes[0][0].endswith(">>") else ToolCategory.CREATE_FILE
    if program in {"sed", "perl"}:
        for arg in args:  # a loop, not `any()` over a generator: seds have few arguments
            if arg.startswith(IN_PLACE):
                return ToolCategory.EDIT
        return ToolCategory.READ_FILE if program == "sed" else ToolCategory.RUN_COMMAND
    if program == "find":
        return ToolCategory.SEARCH if FIND_SEARCH_FLAGS & set(args) else ToolCategory.LIST_DIR
    if program == "git" and args[:1] == ["grep"]:
        return ToolCategory.SEARCH
    if program == "patch" or (program == "git" and args[:1] == ["apply"]):
        return ToolCategory.EDIT
    if program == "touch":
        return ToolCategory.CREATE_FILE
    return BY_PROGRAM.get(program, RUN_COMMAND)


def _command_files(program: str, arguments: list[str]) -> list[str]:
    if program not in OPERAND_FILES and program not in SEARCHERS and program not in FIND_SED:
        # any other program: source-file-like operands, tested cheapest first (most have no dot)
        if not arguments or not SOURCE_END.search("\0".join(arguments) + "\0"):
            return []  # no operand ends like a source file (prose has many words, few names)
        return [
            a
            for a in arguments
            if "." in a
            and SOURCE_FILE.match(a)
            and not a.startswith("-")
            and not a.isdigit()
            and not a.replace(".", "").isdigit()
        ]
    args = []
    for a in arguments:  # a loop, not a comprehension: faster on the few operands commands have
        if a[:1] != "-" and not a.isdigit():
            args.append(a)
    if program in OPERAND_FILES:
        return args
    if program == "find":
        return args[:1]
    return args[1:]  # grep, sed and the like: the first operand is the pattern / script


def _split_program(words: list[str]) -> tuple[str, list[str]]:
    """(program name without its directory, its arguments), past `sudo`, `env`, `X=1` and such."""
    first = words[0] if words else "-"
    if "/" not in first and "=" not in first and first not in PREFIXES and first[:1] != "-":
        return first, words[1:]  # the common case, ahead of the general loop
    for i, word in enumerate(words):
        base = word.rsplit("/", 1)[-1] if "/" in word else word
        if base in PREFIXES or word.startswith("-") or ("=" in word and _is_assignment(word)):
            continue
        return base, words[i + 1 :]
    return "", []


def _is_assignment(word: str) -> bool:
    if "=" not in word:
        return False
    return word.partition("=")[0].isidentifier()
