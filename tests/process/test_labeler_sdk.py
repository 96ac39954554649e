"""`sdk-compat` labeler: exact parity with every stored intent label of the dev traces."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agentlens.formats.load import read_path
from agentlens.process import labeler_sdk as sdk
from agentlens.process.labeler import label_trajectory
from agentlens.process.step_paths import normalize_path
from agentlens.trajectory import Step, ToolCategory
from tests.conftest import BENCH

LETTER = {"exploration": "E", "implementation": "I", "verification": "V", "orchestration": "O"}
TRACES = sorted((BENCH / "trajectories").glob("*/*.json"))


def stored_labels(path: Path) -> list[str]:
    """The release's labels read straight from the JSON, initial state first ('' = unlabelled)."""
    doc = json.loads(path.read_bytes())
    states = sorted(doc["states"].values(), key=lambda s: s["step"])
    return [s.get("intent_stage") or "" for s in states]


def test_all_stored_labels_reproduced() -> None:
    assert len(TRACES) == 399
    total = Counter[str]()
    mismatches = []
    for path in TRACES:
        expected = stored_labels(path)
        (traj,) = read_path(path)
        ours = label_trajectory(traj, "sdk-compat")
        assert len(ours) == len(expected)
        assert expected[0] == "" and ours[0] is None  # the initial state stays unlabelled
        for step, want, got in zip(traj.steps[1:], expected[1:], ours[1:], strict=True):
            total["states"] += 1
            assert step.stored_stage == LETTER[want]  # the reader keeps the release's label
            if LETTER[want] != got:
                mismatches.append((path.name, step.index, want, got, step.command))
    assert total["states"] == 10_442
    assert mismatches == []


def tool(category: ToolCategory, *, command: str | None = None, path: str = "") -> Step:
    return Step(
        index=1, kind="tool", category=category, command=command, files=[path] if path else []
    )


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("grep pytest setup.cfg", True),  # quirk: no boundary after the keyword
        ("cat tox.ini", True),
        ("pip install pytest-cov", True),
        ("cd /testbed && python -m pytest tests/x.py", True),
        ("python reproduce.py", False),
        ("grep -rn 'def test' .", False),
    ],
)
def test_test_command_quirks(command: str, expected: bool) -> None:
    assert sdk.is_test_command(command) is expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("rm -f reproduce.py", True),
        ("cd /testbed && git stash pop", True),
        ("git checkout -- .", True),
        ("mkdir -p foo", False),  # quirk: only the bare form matches
        ("git restore file.py", False),
        ("rm a b", False),
        ("echo hi > /tmp/notes.txt", True),
        # spec §3.5: Rule A reads S, the command with ALL leading cd-prefixes removed
        ("cd /a && cd 'echo x >/tmp/' && ls", False),
    ],
)
def test_cleanup_command_bare_forms_only(command: str, expected: bool) -> None:
    assert sdk.is_cleanup_command(command) is expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat > fix.py << 'EOF'\nx = 1\nEOF", True),
        ("cat <<EOF > f.py\nEOF", False),
        ("cat >> f.py <<EOF\nEOF", False),
        ("cat >>f.py <<EOF\nEOF", True),
        ("sed -i 's/a/b/' setup.cfg", True),  # `.c` accepts `.cfg`
        ("sed -i 's/a/b/' notes.txt", False),
        ("sed -i 's/a/b/' src/app.rst", True),  # `.rs` prefix semantics
        ("sed -i.bak 's/a/b/' x.py", False),
        ("python -c \"open('x.py','w').write('1')\"", True),
    ],
)
def test_code_writing(command: str, expected: bool) -> None:
    assert sdk.is_code_writing(command) is expected


def test_redirect_2_to_1_counts_as_modifying() -> None:
    """Quirk: `2>&1` turns the implementation flag on, so a later `python x.py` is V."""
    steps = [
        tool(ToolCategory.RUN_COMMAND, command="python reproduce.py 2>&1"),
        tool(ToolCategory.RUN_COMMAND, command="python reproduce.py"),
        tool(ToolCategory.READ_FILE, path="/a.py"),
        tool(ToolCategory.READ_FILE, path="/b.py"),
        tool(ToolCategory.READ_FILE, path="/c.py"),
        tool(ToolCategory.READ_FILE, path="/d.py"),
    ]
    assert sdk.label_steps_sdk(steps) == ["E", "V", "E", "E", "E", "E"]


def test_summary_file_and_reproducer_edits() -> None:
    steps = [
        tool(ToolCategory.CREATE_FILE, path="/testbed/reproduce.py"),  # quirk: I, not E
        tool(ToolCategory.EDIT, path="/testbed/pkg/report.py"),  # quirk: summary file -> O
        tool(ToolCategory.CREATE_FILE, path="/testbed/tests/test_x.py"),
    ]
    assert sdk.label_steps_sdk(steps) == ["I", "O", "V"]


def test_read_of_an_edited_file_after_the_change_is_verification() -> None:
    steps = [
        tool(ToolCategory.READ_FILE, path="/testbed/Pkg/Mod.py"),
        tool(ToolCategory.EDIT, path="/testbed/pkg/mod.py"),
        tool(ToolCategory.READ_FILE, path="/testbed/pkg/mod.py"),
        tool(ToolCategory.READ_FILE, path="/testbed/pkg/other.py"),
        tool(ToolCategory.THINK),
        tool(ToolCategory.LIST_DIR, path="/testbed"),
        tool(ToolCategory.FINISH),
        tool(ToolCategory.OTHER),
    ]
    assert sdk.label_steps_sdk(steps) == ["E", "I", "V", "E", "O", "E", "O", "O"]


def test_normalize_path() -> None:
    assert normalize_path("/testbed/Astropy/Table.py") == "astropy/table.py"
    assert normalize_path("/workspace/src\\x.py") == "src/x.py"
    assert normalize_path("/tmp/notes.md") == "notes.md"


@pytest.mark.parametrize(
    ("command", "expected"),
    [  # spec §3.5: S = cmd with ONE leading cd-prefix removed, then the patterns anywhere in S
        ("cd /testbed && cd build/make && ls", True),  # `make` is in S: the second prefix stays
        ("cd /testbed && python -m pytest -x", True),
        ("cd /testbed && ", False),  # S is empty
    ],
)
def test_verification_strips_one_cd_prefix(command: str, expected: bool) -> None:
    assert sdk.is_verification(command) is expected
