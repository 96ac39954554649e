"""Both analyses of a shell line (`categories` for the readers, `actions` for the `paper` labeler)
on every command string in the shared data, read through our readers in every format, and on
generated nesting (`bash -c`, `sh -c`, `eval`, here-documents, quotes, `$()`): neither raises,
both are deterministic, each answer is one of the known kinds, and every file either names is
written in the command (quotes and backslashes aside; for the readers, in the line as they
analyse it: a here-document's `<<EOF` and body become `<< ''`)."""

from __future__ import annotations

import re
from functools import cache
from typing import get_args

from hypothesis import given, settings
from hypothesis import strategies as st

from agentlens.formats import read_paths
from agentlens.process.labeler import label_steps
from agentlens.shell import actions
from agentlens.shell.categories import analyse_command
from agentlens.shell.heredocs import strip_heredocs
from agentlens.trajectory import Step, ToolCategory, Trajectory
from tests.conftest import DATA

ACTIONS = set(get_args(actions.Action))
PATCH = "<patch>"  # what `patch` and `git apply` write: no file named in the line
QUOTING = re.compile(r"[\\'\"]")
# the shape that lost every run of a task (issue 21): a here-document inside `bash -c '…'`
NESTED_HEREDOC = (
    "bash -c '\ncat << EOT > /testbed/reproduce_bug.py\n{body}\nEOT\n"
    "python /testbed/reproduce_bug.py\n'"
)
REPRODUCE = "from pkg import core\nprint(core.parse(1))"
FIX = 'open("/testbed/pkg/core.py", "w").write("x")'


@cache
def shared_commands() -> list[str]:
    """Every distinct shell command of every trajectory (and sub-trajectory) in the shared data."""
    found: set[str] = set()

    def walk(trajectory: Trajectory) -> None:
        found.update(step.command for step in trajectory.steps if step.command)
        for sub in trajectory.subtrajectories:
            walk(sub)

    for trajectory in read_paths([DATA]).trajectories:
        walk(trajectory)
    return sorted(found)


def _loose(text: str) -> str:
    return QUOTING.sub("", text)


def check(command: str) -> None:
    """The invariants of both analyses of one line."""
    category, files = analyse_command(command)
    assert analyse_command(command) == (category, files)
    assert isinstance(category, ToolCategory)
    loose = _loose(command)
    analysed = _loose(strip_heredocs(command.strip().replace("\\\n", " ")))
    for name in files:
        assert _loose(name) in loose or _loose(name) in analysed, (name, command)
    found = actions.analyse(command)
    assert found and found == actions._analyse(command) == actions.analyse(command)
    for action in found:
        assert action.action in ACTIONS
        for path in action.paths:
            assert path == PATCH or _loose(path) in loose, (path, command)


def test_every_shared_command_analyses() -> None:
    commands = shared_commands()
    assert len(commands) > 4000
    for command in commands:
        check(command)


def _shell_step(command: str) -> Step:
    return Step(index=0, kind="tool", category=ToolCategory.RUN_COMMAND, command=command)


def test_a_heredoc_inside_bash_c_is_read_not_raised() -> None:
    """Issue 21: `IndexError` in the paper labeler's shell analysis, every run of a task lost."""
    reproduce, fix = NESTED_HEREDOC.format(body=REPRODUCE), NESTED_HEREDOC.format(body=FIX)
    (written,) = actions.analyse(reproduce)
    assert written == actions.CommandAction("write", ("/testbed/reproduce_bug.py",))
    assert label_steps([_shell_step(reproduce)], "paper") == ["E"]  # reproduces, before a change
    assert label_steps([_shell_step(fix)], "paper") == ["I"]  # runs a script that edits pkg/
    check(reproduce)
    check(fix)


def test_a_marker_the_agent_typed_names_no_body() -> None:
    assert actions.analyse("python __HEREDOC7__") == (actions.CommandAction("run"),)
    check("bash -c 'python __HEREDOC0__'\ncat <<A\nbody\nA")


def test_the_heredoc_a_nested_python_runs_is_its_own() -> None:
    line = "sh -c \"python3 <<'PY'\nopen('pkg/x.py', 'w').write('y')\nPY\n\""
    assert actions.analyse(line) == (actions.CommandAction("write", ("pkg/x.py",)),)


SIMPLE = st.sampled_from(
    [
        "cat src/a.py",
        "ls -la",
        "grep -rn 'def f' src/",
        "python t.py",
        "pytest -q tests/test_a.py",
        "sed -i 's/a/b/' pkg/x.py",
        "echo done > out.txt",
        "cd /testbed",
        "git diff",
        "rm -rf build",
        "find . -name '*.py'",
        "x=1",
        "",
    ]
)
BODY = st.lists(
    st.sampled_from(["import os", "open('a.py', 'w').write('x')", "print(1)", "EOF", "  EOT", ""]),
    max_size=4,
).map("\n".join)
WORD = st.sampled_from(["EOF", "EOT", "PY", "'EOF'", '"EOT"'])


def _nest(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        inner.map(lambda s: f"bash -c '{s}'"),
        inner.map(lambda s: f'sh -c "{s}"'),
        inner.map(lambda s: f'eval "{s}"'),
        inner.map(lambda s: f"echo $({s})"),
        inner.map(lambda s: f"bash -c '\n{s}\n'"),
        st.tuples(inner, inner, st.sampled_from([" && ", " | ", "; ", "\n", " || ", " & "])).map(
            lambda t: t[2].join(t[:2])
        ),
        st.tuples(WORD, BODY, inner, st.sampled_from(["cat <<", "cat << ", "python <<-"])).map(
            lambda t: (
                f"{t[3]}{t[0]} > /testbed/r.py\n{t[1]}\n{t[0].strip(chr(39) + chr(34))}\n{t[2]}"
            )
        ),
    )


NESTED = st.recursive(SIMPLE, _nest, max_leaves=8)
NOISE = st.lists(
    st.sampled_from([*"'\"\\$()`<>|&;#\n\t -=", "EOF", "<<", "__HEREDOC0__"]), max_size=12
).map("".join)


@settings(max_examples=400, deadline=None)
@given(NESTED)
def test_generated_nesting_analyses(command: str) -> None:
    check(command)


@settings(max_examples=300, deadline=None)
@given(st.tuples(NESTED, NOISE, NESTED).map("".join))
def test_generated_nesting_with_noise_analyses(command: str) -> None:
    check(command)
