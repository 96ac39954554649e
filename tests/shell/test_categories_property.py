"""Property checks for the shell classifier's fast paths: each shortcut must give what the general
path gives, on every shell command in the real SWE-agent and mini-swe-agent runs and on seeded
random shell-like strings. The general path is re-stated here the plain way (split the line into
pipelines first, then fold them), so the one-pass fold in `_analyse_compound` is checked against
an independent grouping."""

from __future__ import annotations

import json
import random
import re
from functools import cache

import pytest

from agentlens.shell import categories as cat
from agentlens.shell import tokens as sh
from agentlens.shell.heredocs import strip_heredocs
from agentlens.trajectory import ToolCategory
from tests.conftest import DATA, FORMATS

FENCE = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
PIECES = [
    *"ab c./-=_'\"\\|&;<>()#\n\t$*",
    *("cat ", "ls ", "grep -n ", "sed -i ", "find . -name ", "python x.py", "cd /r && "),
    *("<<EOF\n", "\nEOF", "<<'PY'\n", "\nPY\n", "&&", "||", "2>&1", " > f.txt", ">> a.md "),
    *("sudo ", "FOO=1 ", "git apply", "echo ", "tee ", "| head", "| python", "x.java ", "-la "),
]


# The tokenizer re-stated with a group per kind (a word or an operator, a single- and a
# double-quoted word), unquoting each in the loop; `sh.tokens` picks a regex by the line and
# unquotes only the marked tokens.
REFERENCE_TOKEN = re.compile(
    r"((?:[^\s'\";|&()<>\\#]|\\.)[^\s'\";|&()<>\\]*(?:\\.[^\s'\";|&()<>\\]*)*"
    r"|&&|\|\||;;|\|&|&>>|&>|>>|>&|<&|<<<|<<-|<<|>\||<>|[;|&()<>\n])"
    r"|('[^']*'?)"
    r'|("[^"\\]*(?:\\.[^"\\]*)*"?)'
    r"|#[^\n]*"
)


def _tokens(cmd: str) -> list[tuple[str, bool]]:
    """Words and operators (flagged True) of a line, as the classifier sees them."""
    words, operators = sh.words_and_operators(cmd)
    flagged = set(operators)
    return [(word, at in flagged) for at, word in enumerate(words)]


@cache
def _real_commands() -> list[str]:
    """Actions of the SWE-agent runs and fenced commands of the mini-swe-agent replies, taken
    from the raw JSON (not from our readers)."""
    commands = set()
    for path in sorted(DATA.glob("swe-agent-java/*/trajs/*.traj")) + sorted(
        (FORMATS / "swe-agent").glob("*.traj")
    ):
        for entry in json.loads(path.read_bytes()).get("trajectory") or []:
            commands.add(str(entry.get("action") or ""))
    for path in sorted(DATA.glob("mini-swe-agent-swebv/trajs/*/*.traj.json")):
        for message in json.loads(path.read_bytes())["messages"]:
            if message["role"] == "assistant":
                commands.update(FENCE.findall(message["content"]))
    return sorted(commands)


def _random_commands(count: int) -> list[str]:
    rng = random.Random(20261130)
    return ["".join(rng.choices(PIECES, k=rng.randint(0, 24))) for _ in range(count)]


def _lines() -> list[str]:
    return [*_real_commands(), *_random_commands(4000)]


def _reference_tokens(cmd: str) -> list[tuple[str, bool]]:
    tokens: list[tuple[str, bool]] = []
    for plain, single, double in REFERENCE_TOKEN.findall(cmd):
        if plain:
            tokens.append((plain, plain in sh.OPERATORS))
        elif single:
            closed = len(single) > 1 and single.endswith("'")
            tokens.append((single[1:-1] if closed else single[1:], False))
        elif double:
            closed = len(double) > 1 and double.endswith('"')
            text = double[1:-1] if closed else double[1:]
            tokens.append((text.replace('\\"', '"'), False))
    return tokens


def _reference_pipelines(tokens: list[tuple[str, bool]]) -> list[list[cat.Parsed]]:
    """Split tokens into pipelines of (program, args, writes); empty commands are dropped."""
    pipelines: list[list[tuple[list[str], list[tuple[str, str]]]]] = [[([], [])]]
    pending = None
    for token, is_op in tokens:
        words, targets = pipelines[-1][-1]
        if pending is not None:
            targets.append((pending, token))
            pending = None
        elif not is_op:
            if token and (words or not cat._is_assignment(token)):
                words.append(token)
        elif token in sh.SEPARATORS:
            pipelines.append([([], [])])
        elif token in sh.PIPES:
            pipelines[-1].append(([], []))
        else:  # a redirection; a leading file-descriptor number is not a word
            if words and words[-1].isdigit():
                words.pop()
            pending = token
    kept = [[c for c in p if c[0] or c[1]] for p in pipelines]
    return [[cat._parse(words, targets) for words, targets in p] for p in kept if p]


def _reference_compound(line: str) -> tuple[ToolCategory, tuple[str, ...]]:
    pipelines = _reference_pipelines(_tokens(line))
    found = [c for c in map(cat._pipeline_category, pipelines) if c is not None]
    # the first of the strongest; a line of only `cd`-like commands runs something
    category = min(found, key=cat.STRENGTH.index) if found else ToolCategory.RUN_COMMAND
    files: list[str] = []
    for pipeline in pipelines:
        for program, args, writes in pipeline:
            named = [name for _, name in writes] + cat._command_files(program, args)
            files += [f for f in named if f not in files]
    return category, tuple(files)


def _reference_split(words: list[str]) -> tuple[str, list[str]]:
    for i, word in enumerate(words):
        base = word.rsplit("/", 1)[-1]
        if base in cat.PREFIXES or word.startswith("-") or cat._is_assignment(word):
            continue
        return base, words[i + 1 :]
    return "", []


def _reference_files(program: str, arguments: list[str]) -> list[str]:
    operands = [a for a in arguments if not a.startswith("-") and not a.isdigit()]
    if program in cat.OPERAND_FILES:
        return operands
    if program == "find":
        return operands[:1]
    if program in cat.SEARCHERS or program == "sed":
        return operands[1:]
    return [
        a
        for a in arguments
        if cat.SOURCE_FILE.match(a) and not a.startswith("-") and not a.replace(".", "").isdigit()
    ]


def test_command_rules_match_their_plain_statement() -> None:
    """`_split_program`, `_command_category` and `_command_files` have shortcuts for the common
    case (a first word that is the program, a program known by its name alone, few operands);
    the category's must agree with all of its rules, `_category_by_rules`."""
    programs = sorted(cat.SPECIAL_PROGRAMS | cat.OPERAND_FILES | cat.SEARCHERS | {"python", "x"})
    arguments = [[], ["-i", "a.py"], ["-n", "1,5p", "a.py"], [".", "-name", "*.py"], ["grep", "x"]]
    # `$` in SOURCE_FILE allows a final newline; a NUL inside an operand (the join's separator)
    arguments += [["a.py\n", "x\0b.cpp", "c.cpp\0", "1.5", "-k.py", "d.pyx", "e.h"]]
    writes = [[], [(">", "f.txt")], [(">>", "a.md")]]
    commands = [
        ([program, *args], list(written))
        for program in programs
        for args in arguments
        for written in writes
    ]
    for line in _lines():
        for pipeline in _reference_pipelines(_tokens(_analysed_text(line))):
            commands += [([program, *args], written) for program, args, written in pipeline]
        commands.append((_analysed_text(line).split(), []))
    for words, written in commands:
        program, args = cat._split_program(words)
        assert (program, args) == _reference_split(words), words
        category = cat._command_category(program, args, written)
        assert category is cat._category_by_rules(program, args, written), words
        assert cat._command_files(program, args) == _reference_files(program, args), words


def _analysed_text(command: str) -> str:
    return strip_heredocs(command.strip().replace("\\\n", " "))[: cat.ANALYSED_LENGTH]


def test_the_real_commands_are_many_and_varied() -> None:
    commands = _real_commands()
    assert len(commands) > 300
    texts = [_analysed_text(c) for c in commands]
    assert sum(not cat.SHELL_SYNTAX.search(t) for t in texts) > 50  # plain
    assert sum(bool(cat.COMPOUND.search(t)) for t in texts) > 50  # compound


def test_tokens_match_a_group_per_kind() -> None:
    between_quotes = 0  # lines `sh.words_and_operators` splits with `str.split`
    edge = ["a ''", "x \"\" > ''", "echo '\\' \\\n b", "a\\", "a 'b\nc' d\ne", 'x"y z" w\n\'open']
    for line in [*_lines(), *edge, "''", "a''b", '"', "\n'\n'\n", "a\x1cb 'c\u2028d'\te"]:
        text = _analysed_text(line)
        assert _tokens(text) == _reference_tokens(text), text
        between_quotes += bool(re.fullmatch(r"[^|&;<>()#\\]*['\"][^|&;<>()#\\]*", text))
    assert between_quotes > 100


def test_one_pass_fold_matches_pipelines_split_first() -> None:
    for line in _lines():
        text = _analysed_text(line)
        found = cat._analyse_compound(*sh.words_and_operators(text))
        assert found == _reference_compound(text), text


def test_shortcuts_match_the_general_path() -> None:
    checked = {"plain": 0, "simple": 0}
    for line in _lines():
        text = _analysed_text(line)
        category, files = cat._analyse_line(text)
        general, general_files = _reference_compound(text)
        assert category is general, text
        if not cat.SHELL_SYNTAX.search(text):  # the plain path lists each file once
            assert list(files) == list(dict.fromkeys(general_files)), text
            checked["plain"] += 1
        elif not cat.COMPOUND.search(text):
            assert files == general_files, text
            checked["simple"] += 1
        else:
            assert files == general_files, text
    assert min(checked.values()) > 100


def test_caches_give_what_a_fresh_analysis_gives() -> None:
    long_line = "cat <<EOF > big.py\n" + "x = 1\n" * 400 + "EOF\npython big.py"
    for line in [*_lines()[:3000], long_line, "ls " + "a.py " * 300]:
        expected = cat._analyse_line(_analysed_text(line))
        for _ in range(2):  # a miss, then a hit
            assert cat._analyse(line.strip()) == expected, line
        category, files = cat.analyse_command(line)
        assert (category, files) == (expected[0], list(expected[1]))
        assert cat.categorize_command(line) is category
        assert cat.files_in_command(line) == files


@pytest.mark.parametrize(
    ("program", "arguments", "files"),
    [
        ("cat", ["-n", "a.py", "12", "b"], ["a.py", "b"]),
        ("grep", ["-rn", "pattern", "src", "x.py"], ["src", "x.py"]),
        ("sed", ["-n", "1,5p", "a.py"], ["a.py"]),
        ("find", [".", "-name", "*.py"], ["."]),
        (
            "python",
            ["-m", "pytest", "tests/x.py", "1.5", "-k.py", "v1.2.py", "notes"],
            ["tests/x.py", "v1.2.py"],
        ),
        ("javac", ["-cp", ".:lib", "A.java", "B.class"], ["A.java"]),
    ],
)
def test_operand_files(program: str, arguments: list[str], files: list[str]) -> None:
    assert cat._command_files(program, arguments) == files


@pytest.mark.parametrize(
    ("words", "program", "rest"),
    [
        (["FOO=1", "sudo", "-E", "/usr/bin/cat", "x"], "cat", ["x"]),
        (["env", "A=b", "python", "x.py"], "python", ["x.py"]),
        (["./run.sh", "a=b"], "run.sh", ["a=b"]),
        (["sudo", "-u"], "", []),
        (["a/b=c", "ls"], "b=c", ["ls"]),  # `a/b` is no variable name: a program path
    ],
)
def test_split_program(words: list[str], program: str, rest: list[str]) -> None:
    assert cat._split_program(words) == (program, rest)
