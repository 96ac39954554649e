"""`paper` labeler rules added after the first frozen round was scored (and so spent): each rule
class pinned on the real step of a spent state (tests/process/labelled_states) whose adjudicated
label it now matches, and on the real command strings of ../shared/data its shell reading uses.
The fresh frozen round is not read here."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlens.errors import AgentLensError
from agentlens.formats.load import read_path
from agentlens.process.file_roles import file_role, named_check, project_path
from agentlens.process.labeler import label_trajectory
from agentlens.shell.actions import analyse
from tests.process.label_scripts import adjudicated_stages, script

SPENT = ("tune", "frozen")


@pytest.fixture(scope="module")
def spent(data_dir: Path) -> dict[str, object]:
    return {s.state_id: s for s in script("_labelset").read_states() if s.split in SPENT}


@pytest.fixture(scope="module")
def gold() -> dict[str, str]:
    return adjudicated_stages()


# (spent state, adjudicated stage, what identifies the step, the rule class it pins)
CASES = [
    # edits through the shell or a format's own event, which the run context must see
    ("s0111", "I", "sed -i", "a file the task names is source, though in tests/"),
    ("s0108", "V", "cat tests/missing_colon.py", "re-reading it after that edit"),
    ("s0303", "V", "python3 tests/missing_colon.py", "running it after that edit"),
    ("s0233", "I", "cat > tests/missing_colon.py", "rewriting the file the task names"),
    ("s0296", "I", "file_change", "/private/tmp is system temp: a first write is the deliverable"),
    ("s0066", "I", "mv /workspace/game_2048.py", "a rename onto a project name is a change"),
    ("s0354", "V", "str_replace_editor", "listing the workspace root after the change"),
    ("s0399", "I", "run_ipython", "Python (an IPython cell) that writes a project file"),
    ("s0316", "I", "cat <<'EOF' > update_tests.py", "writing a script that rewrites project files"),
    ("s0123", "V", "Write", "NavUser.test.tsx: a test file by its language's convention"),
    ("s0058", "E", "mkdir -p /testbed/tmp", "a tmp/ folder in the project is scratch"),
    # bookkeeping around the change, trackers and the environment
    ("s0005", "O", "git push --set-upstream", "publishing commits is bookkeeping"),
    ("s0216", "O", "bd update", "a tracker status update is bookkeeping"),
    ("s0470", "E", "bd show", "reading the task's tracker record gathers the problem"),
    ("s0266", "O", "mkdir -p /agent/workspace/local/reproduce", "listing a folder just made"),
    ("s0388", "V", "chmod +x run_test.sh", "readying the run's own check after the change"),
    # reads of files the run did or did not edit
    ("s0218", "E", "open_file('/workspace/src/PullRequestViewer.tsx')", "a file beside an edit"),
    ("s0538", "E", 'grep -n "def integrate"', "a file beside an edit"),
    ("s0059", "V", "read_file", "the very next look at a file an edit just failed on"),
]


@pytest.mark.parametrize(("state_id", "stage", "marker", "rule"), CASES)
def test_rule_on_a_spent_state(
    spent: dict[str, object],
    gold: dict[str, str],
    state_id: str,
    stage: str,
    marker: str,
    rule: str,
) -> None:
    state = spent[state_id]
    traj = script("_labelset").trajectory_of(state)
    step = traj.steps[state.step_index]  # type: ignore[attr-defined]
    assert marker in f"{step.tool_name} {step.command or ''}", rule
    assert gold[state_id] == stage
    assert label_trajectory(traj, "paper")[state.step_index] == stage, rule  # type: ignore[attr-defined]


def test_without_the_task_text_a_tests_folder_file_stays_a_check(data_dir: Path) -> None:
    """The task-named rule needs the task: the same run labelled from its steps alone (as a merged
    reference is) reads `tests/missing_colon.py` as a check, as before."""
    from agentlens.process.labeler import label_steps, state_indices

    (traj,) = read_path(data_dir / "formats/mini-swe-agent-fixtures/github_issue.traj.json")
    steps = [traj.steps[i] for i in state_indices(traj)]
    edit = next(i for i, s in enumerate(steps) if (s.command or "").startswith("sed -i"))
    assert label_steps(steps, "paper")[edit] == "E"
    assert label_steps(steps, "paper", task=traj.task)[edit] == "I"


# real command strings from ../shared/data (each found in the data by the test below)
REAL_COMMANDS = {
    "git push --set-upstream origin spotter-dov 2>&1": [("setup", ())],
    "bd update spotter-dov.2 --status in_progress": [("setup", ())],
    "bd show spotter-dov.2": [("task", ())],
    "bd ready": [("task", ())],
    "mkdir -p /agent/workspace/local/reproduce && cd /agent/workspace/local/reproduce && ls -la": [
        ("cleanup", ()),
        ("nav", ()),
        ("cleanup", ()),
    ],
    "mv /workspace/game_2048.py /workspace/2048.py": [("write", ("/workspace/2048.py",))],
    "chmod +x run_test.sh": [("prepare", ("run_test.sh",))],
    "cp /testbed/xarray/core/dataset.py /testbed/xarray/core/dataset.py.bak": [("cleanup", ())],
}


@pytest.mark.parametrize(("command", "expected"), REAL_COMMANDS.items())
def test_shell_reading_of_real_commands(
    corpus_commands: set[str], command: str, expected: list[tuple[str, tuple[str, ...]]]
) -> None:
    assert any(line.startswith(command) for line in corpus_commands), "not a real command"
    assert [(a.action, a.paths) for a in analyse(command)] == expected


def test_apply_patch_names_the_files_it_changes(corpus_commands: set[str]) -> None:
    patch = next(c for c in corpus_commands if c.startswith("apply_patch <<'PATCH'"))
    (action,) = analyse(patch)
    assert (action.action, action.paths) == ("write", ("/testbed/requests/models.py",))


def test_a_rename_is_a_change_and_a_restore_is_cleanup() -> None:
    (rename,) = analyse("mv /workspace/game_2048.py /workspace/2048.py")
    (restore,) = analyse("mv pkg/core.py.bak pkg/core.py")
    assert rename.renamed and not rename.restored
    assert restore.renamed and restore.restored


def test_in_place_flags_of_sed_and_perl() -> None:
    for command in ("perl -pi -e 's/a/b/' pkg/x.py", "sed -i.bak 's/a/b/' pkg/x.py"):
        assert [(a.action, a.paths) for a in analyse(command)] == [("write", ("pkg/x.py",))]
    assert analyse("perl -e 'print 1' pkg/x.py")[0].action == "run"


@pytest.mark.parametrize(
    ("path", "role", "by_name"),
    [
        ("/private/tmp/codex-research-test/hello.txt", "check", False),  # where, not a name
        ("/var/folders/ab/T/x.py", "check", False),
        ("/testbed/tmp/pom.xml", "check", True),  # a tmp/ folder the agent made in the project
        ("src/client/components/NavUser.test.tsx", "check", True),
        ("src/test/java/FooTest.java", "check", True),
        ("FooTest.java", "check", True),
        ("templates/item.html", "source", False),  # `templates` only starts like `temp`
        ("xarray/core/dataset.py", "source", False),
    ],
)
def test_file_roles_by_convention_and_temp_root(path: str, role: str, by_name: bool) -> None:
    assert file_role(path) == role
    assert named_check(path) == by_name


def test_project_path_sees_one_root_in_every_format() -> None:
    for root in ("/workspace", "/testbed/", "/agent/workspace/local", "."):
        assert project_path(root.lstrip("/").rstrip("/")) == ""
    assert project_path("tests/./missing_colon.py") == "tests/missing_colon.py"


@pytest.fixture(scope="module")
def corpus_commands(data_dir: Path) -> set[str]:
    """Every shell command of the runs the labelled states were drawn from."""
    folders = ["agentlens-bench-dev/trajectories", "formats/openhands", "formats/claude-code"]
    folders += ["swe-agent-java"]
    commands: set[str] = set()
    for folder in folders:
        for path in sorted((data_dir / folder).rglob("*")):
            if path.suffix not in {".json", ".jsonl", ".traj"} or "ground_truth" in path.parts:
                continue
            try:
                trajs = read_path(path)
            except AgentLensError:  # sidecars and other formats are not runs
                continue
            for traj in trajs:
                commands |= {s.command for s in traj.steps if s.command}
    return commands


def test_python_pasted_as_the_command_writes_the_file_it_opens(data_dir: Path) -> None:
    """A model pastes Python into the terminal (`EDITED_CODE = \"\"\"…\"\"\"` … `open(p, 'w')`):
    "python that writes a file" is I, as the same write through `python3 -c` is."""
    folder = data_dir / "agentlens-bench-dev/trajectories/pydata__xarray-3993"
    (traj,) = read_path(
        folder / "pydata__xarray-3993-logs-gemini-2.5-pro-fail-24962859029_pta.json"
    )
    labels = label_trajectory(traj)
    pasted = [
        i
        for i, s in enumerate(traj.steps)
        if (s.command or "").startswith('EDITED_CODE="""def integrate')
        and "open('/testbed/xarray/core/dataarray.py', 'w')" in (s.command or "")
    ]
    assert pasted and all(labels[i] == "I" for i in pasted)


def test_reading_a_background_commands_output_carries_its_stage(data_dir: Path) -> None:
    """Claude Code runs `mix test` in the background and reads its output file (`tail …/tasks/
    <id>.output`) or asks for it (`TaskOutput`): the look is the test run's own stage, V."""
    folder = data_dir / "formats/claude-code/marot-spotter"
    (traj,) = read_path(folder / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    labels = label_trajectory(traj)
    started = next(
        s.index
        for s in traj.steps
        if "running in background with ID: b7636e2" in (s.observation or "")
    )
    reads = [
        s.index
        for s in traj.steps
        if s.index > started
        and ("tasks/b7636e2.output" in (s.command or "") or s.tool_name == "TaskOutput")
    ]
    assert labels[started] == "V" and reads
    assert [labels[i] for i in reads] == ["V"] * len(reads)


def test_a_look_the_agent_says_verifies_the_change_is_verification(data_dir: Path) -> None:
    """After a change, reading a file the run did not edit is E, unless the agent's own note on
    the step says it is to verify or confirm ("judge by intent in context")."""
    folder = data_dir / "agentlens-bench-dev/trajectories/pydata__xarray-3993"
    (traj,) = read_path(folder / "pydata__xarray-3993-logs-opus-4.5-pass-25069529856_pta.json")
    labels = label_trajectory(traj)
    step = traj.steps[48]
    assert str(step.arguments.get("thought", "")).startswith("Let me verify the implementation")
    assert step.files and "dataset.py" in step.files[0]
    assert labels[48] == "V"
