"""Where a file a step names is, on the SWE-agent run that `cd`s below its repository root."""

from __future__ import annotations

import pytest

from agentlens.formats import read_path
from agentlens.shell.working_dir import moves_shell, named_in, resolve, step_paths, working_folder
from tests.conftest import DATA

RUN = (
    DATA
    / "swe-agent-java"
    / "20240825_SWE-agent_deepseek-chat-v2"
    / "trajs"
    / "fasterxml__jackson-databind-3701.traj"
)
ROOT = "/fasterxml__jackson-databind"
NODE = "com/fasterxml/jackson/databind/node"


def test_each_file_of_the_run_is_named_from_the_directory_it_was_named_in() -> None:
    """The run opens `NodeCursor.java` in `src/main/java/.../node`, then runs `cd ../../../..`,
    `mkdir -p src/test/...`, `cd src/test/...` and `create CustomNodeTest.java` as one action:
    SWE-agent's editor shows where each file really is."""
    (traj,) = read_path(RUN)
    named = {s.command.split("\n")[-1]: step_paths(s) for s in traj.tool_steps if s.files}
    assert named["open NodeCursor.java 198"] == [f"{ROOT}/src/main/java/{NODE}/NodeCursor.java"]
    assert named["create CustomNodeTest.java"] == [
        f"{ROOT}/src/main/java/com/src/test/java/{NODE}",
        f"{ROOT}/src/main/java/com/src/test/java/{NODE}/CustomNodeTest.java",
    ]
    javac = next(k for k in named if k.startswith("javac"))
    assert named[javac] == [
        f"{ROOT}/src/main/java/com/src/test/java/{NODE}/CustomNodeTest.java",
        f"{ROOT}/src/main/java/com/src/test/java/{NODE}/Custom.java",
    ]


@pytest.mark.parametrize(
    ("path", "where", "resolved"),
    [
        ("./x.py", "/repo", "/repo/x.py"),
        ("a/../x.py", None, "x.py"),
        ("./x.py", None, "x.py"),
        ("/repo/./a//b.py", "/elsewhere", "/repo/a/b.py"),
        ("~/x.py", "/repo", "~/x.py"),
        ("../x.py", "/repo/sub", "/repo/x.py"),
    ],
)
def test_a_name_is_joined_to_its_directory_and_collapsed(
    path: str, where: str | None, resolved: str
) -> None:
    assert resolve(path, where) == resolved


@pytest.mark.parametrize(
    ("command", "dirs"),
    [
        ("cd sub && cat a.py", ["/r/sub"]),
        ("(cd sub && ls) ; cat a.py", ["/r"]),
        ("cd - && cat a.py", [None]),
        ("cd $HOME\ncat a.py", [None]),
        ("cat a.py; cd sub", ["/r"]),
        ("cat > a.py <<EOF\ncd sub\nEOF", ["/r"]),
    ],
)
def test_a_cd_moves_only_the_names_after_it(command: str, dirs: list[str | None]) -> None:
    assert named_in(command, ["a.py"], "/r") == dirs


@pytest.mark.parametrize(
    ("value", "folder"),
    [
        ("/repo/sub/../src/", "/repo/src"),
        ("//repo", "/repo"),
        ("/..", "/"),
        ("/tmp/a b", "/tmp/a b"),
        ("repo", None),
        ("../etc", None),
        ("C:\\repo", None),
        ("/repo\x00x", None),
        ("/repo\nx", None),
        ("/" + "a" * 5000, None),
        (7, None),
        (["/repo"], None),
    ],
)
def test_only_an_absolute_printable_folder_is_a_working_folder(
    value: object, folder: str | None
) -> None:
    assert working_folder(value) == folder


@pytest.mark.parametrize(
    ("command", "moves"),
    [
        ("ls src", False),
        ("cd /r && ls", False),
        ("(cd sub && ls)", False),
        ("echo cd", False),
        ("cd sub && ls", True),
        ("cd $D", True),
        ("pushd sub", True),
    ],
)
def test_a_shell_is_moved_by_a_cd_that_ends_elsewhere(command: str, moves: bool) -> None:
    assert moves_shell(command, "/r") is moves


@pytest.mark.parametrize("command", ["cd /r/ && ls", "cd /r/. && ls", "cd sub/.. && ls"])
def test_a_cd_back_to_the_same_folder_spelled_otherwise_does_not_move_the_shell(
    command: str,
) -> None:
    assert moves_shell(command, "/r") is False
