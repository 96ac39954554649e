"""`paper` labeler: each documented quirk of the released labeler is fixed, pinned on real steps."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agentlens.formats.load import read_path
from agentlens.process import labeler_sdk as sdk
from agentlens.process.labeler import label_trajectory
from agentlens.process.labeler_paper import file_role, label_steps_paper
from agentlens.process.labeler_paper_tools import intended_command
from agentlens.shell.actions import analyse
from agentlens.trajectory import Step, ToolCategory, Trajectory
from tests.conftest import BENCH

LETTER = {"exploration": "E", "implementation": "I", "verification": "V", "orchestration": "O"}
EDIT_TOOLS = {"replace_string_in_file", "create_file"}


def load(name: str) -> tuple[Trajectory, list[dict[str, object]]]:
    task = name.split("-logs-")[0]
    path = BENCH / "trajectories" / task / f"{name}_pta.json"
    doc = json.loads(Path(path).read_bytes())
    states = sorted(doc["states"].values(), key=lambda s: s["step"])
    (traj,) = read_path(path)
    return traj, states


def case(name: str, index: int) -> tuple[str, str, dict[str, object], list[dict[str, object]]]:
    """(stored label, paper label, raw state, earlier raw states) of one real step."""
    traj, states = load(name)
    paper = label_trajectory(traj, "paper")
    state = states[index]
    return LETTER[str(state["intent_stage"])], str(paper[index]), state, states[1:index]


def command(state: dict[str, object]) -> str:
    return str(state["log_entry"]["args"].get("command", ""))  # type: ignore[index]


def project_edits(states: list[dict[str, object]]) -> list[str]:
    """Files the run edited with the editor tool, reproduction scripts excluded (from raw JSON)."""
    return [
        str(s["file_path"])
        for s in states
        if s["tool_used"] in EDIT_TOOLS and "repro" not in str(s["file_path"])
    ]


def test_reproduction_script_before_any_fix_is_exploration() -> None:
    stored, paper, state, before = case(
        "astropy__astropy-13236-logs-gemini-2.5-pro-fail-24962858941", 5
    )
    assert state["tool_used"] == "create_file" and "reproduce" in str(state["file_path"])
    assert project_edits(before) == []
    assert (stored, paper) == ("I", "E")


def test_grep_for_pytest_is_not_a_test_run() -> None:
    stored, paper, state, before = case("pallets__flask-5014-logs-opus-4.5-pass-25069530264", 6)
    assert command(state).startswith("grep -n -B 5 -A 5 'with pytest.raises")
    assert sdk.is_test_command(command(state))
    assert project_edits(before) == []
    assert (stored, paper) == ("V", "E")


def test_stderr_redirect_is_not_an_edit() -> None:
    name = "pallets__flask-5014-logs-opus-4.5-pass-25069529856"
    _, _, redirected, before = case(name, 13)
    stored, paper, state, _ = case(name, 14)
    assert "2>&1" in command(redirected) and sdk.is_modifying(command(redirected))
    assert all(a.action != "write" for a in analyse(command(redirected)))
    assert project_edits([*before, redirected]) == []
    assert command(state) == "cd /testbed && git status"
    assert (stored, paper) == ("V", "E")


@pytest.mark.parametrize(
    ("name", "index", "stored", "start"),
    [
        ("sphinx-doc__sphinx-10323-logs-gemini-2.5-pro-pass-24945658083", 5, "E", "mkdir -p "),
        ("django__django-11066-logs-gpt-5.2-codex-fail-25117200392", 20, "V", "rm -f "),
        (
            "sympy__sympy-12481-logs-sonnet-4.5-pass-24941916041",
            87,
            "V",
            "cd /testbed && git checkout ",
        ),
    ],
)
def test_cleanup_with_arguments_is_orchestration(
    name: str, index: int, stored: str, start: str
) -> None:
    label, paper, state, _ = case(name, index)
    assert command(state).startswith(start)
    assert not sdk.is_cleanup_command(command(state))
    assert (label, paper) == (stored, "O")


def test_scratch_script_in_tmp_before_the_fix_is_exploration() -> None:
    stored, paper, state, before = case(
        "astropy__astropy-13236-logs-gpt-5.2-codex-fail-25003569912", 8
    )
    assert "> /tmp/repro_structured_ndarray.py" in command(state)
    assert project_edits(before) == []
    assert (stored, paper) == ("O", "E")


def test_after_a_real_edit_rerunning_and_rereading_is_verification() -> None:
    traj, states = load("pallets__flask-5014-logs-opus-4.5-pass-25081012020")
    paper = label_trajectory(traj, "paper")
    first_edit = next(i for i, s in enumerate(states) if s["tool_used"] == "replace_string_in_file")
    assert paper[first_edit] == "I"
    later = range(first_edit + 1, len(states))
    runs = [i for i in later if "python -m pytest" in command(states[i])]
    edited = states[first_edit]["file_path"]
    rereads = [
        i
        for i in later
        if states[i]["file_path"] == edited and states[i]["tool_used"] == "read_file"
    ]
    assert runs and rereads
    assert {paper[i] for i in runs + rereads} == {"V"}
    before = [paper[i] for i in range(1, first_edit) if "python -m pytest" in command(states[i])]
    assert before and set(before) == {"E"}  # the same test runs before the change probe it


def test_failed_edit_is_implementation_but_changes_nothing() -> None:
    """A failed edit is I; the very next look at its file checks that edit (V, as all three
    annotators labelled frozen state s0059), but the project is unchanged: a later look at the
    same file, after a step in between, explores again."""
    traj, states = load("pydata__xarray-3993-logs-gemini-2.5-pro-fail-24962858941")
    paper = label_trajectory(traj, "paper")
    obs = str(states[13]["log_entry"]["response_preview"])  # type: ignore[index]
    assert "No replacement was performed" in obs
    assert states[14]["file_path"] == states[13]["file_path"]
    assert (paper[13], paper[14]) == ("I", "V")
    assert states[16]["file_path"] == states[13]["file_path"] and states[15]["tool_used"] != (
        "replace_string_in_file"
    )
    assert paper[16] == "E"


def test_fixed_tool_stages_agree_with_the_release() -> None:
    counts = Counter[tuple[str, str, str]]()
    for path in sorted((BENCH / "trajectories").glob("*/*.json"))[::10]:
        (traj,) = read_path(path)
        for step, label in zip(traj.steps, label_trajectory(traj, "paper"), strict=True):
            if step.category in (ToolCategory.THINK, ToolCategory.LIST_DIR):
                counts[(str(step.category), str(step.stored_stage), str(label))] += 1
    assert counts and all(stored == ours for _, stored, ours in counts)


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("/testbed/pkg/report.py", "source"),  # the release calls it a summary file (O)
        ("/testbed/FIX_SUMMARY.md", "notes"),
        ("/tmp/notes.txt", "notes"),
        ("/tmp/check.py", "check"),
        ("/testbed/tests/test_x.py", "check"),
        ("/testbed/django/test/utils.py", "source"),
        ("/testbed/pylint/checkers/similar.py", "source"),
        ("/testbed/docs/changes/123.bugfix.rst", "source"),
    ],
)
def test_file_roles(path: str, role: str) -> None:
    assert file_role(path) == role


def test_works_on_canonical_steps_of_any_format() -> None:
    steps = [
        Step(index=0, kind="user", text="fix it"),
        Step(index=1, kind="tool", category=ToolCategory.READ_FILE, command="cat pkg/mod.py"),
        Step(
            index=2, kind="tool", category=ToolCategory.EDIT, command="sed -i 's/a/b/' pkg/mod.py"
        ),
        Step(index=3, kind="tool", category=ToolCategory.RUN_COMMAND, command="pytest -q 2>&1"),
        Step(index=4, kind="agent", text="done"),
    ]
    traj = Trajectory(id="t", source={"format": "x"}, steps=steps)  # type: ignore[arg-type]
    assert label_trajectory(traj, "paper") == [None, "E", "I", "V", None]


def _shell(command: str, *, category: ToolCategory = ToolCategory.RUN_COMMAND, **more: Any) -> Step:
    return Step(
        index=0, kind="tool", tool_name="bash", arguments={"command": command}, command=command,
        category=category, **more,
    )  # fmt: skip


def _output_of(task_id: str) -> Step:
    arguments = {"task_id": task_id}
    return Step(index=0, kind="tool", tool_name="TaskOutput", arguments=arguments)


BEAD = 'bd create "Fix login" -t bug'  # a non-coding task's requested action: I


def test_a_shell_line_that_is_the_change_puts_the_run_after_it() -> None:
    """Once the requested action ran as a shell line, running the tests checks it (V)."""
    assert label_steps_paper([_shell(BEAD), _shell("python -m pytest -q")]) == ["I", "V"]


def test_reading_a_background_actions_output_checks_it() -> None:
    """The output of a background run is that run (E before a change); the output of the
    requested action itself is looking at what it did (V)."""
    started = "Command running in background with ID: {}"
    action = [_shell(BEAD, observation=started.format("b1")), _output_of("b1")]
    probe = [_shell("python -m pytest -q", observation=started.format("b2")), _output_of("b2")]
    assert label_steps_paper(action) == ["I", "V"]
    assert label_steps_paper(probe) == ["E", "E"]


def test_a_verification_step_counts_as_having_looked() -> None:
    """After an edit and a test run (nothing labelled E), a file first written in /tmp/ is a
    check (V): the run has looked at the project, so it is not the first-written deliverable."""
    edit = _shell("sed -i 's/a/b/' pkg/core.py", category=ToolCategory.EDIT, files=["pkg/core.py"])
    scratch = "/tmp/out.py"
    write = _shell(
        f"cat > {scratch} <<EOF\nx = 1\nEOF", category=ToolCategory.CREATE_FILE, files=[scratch]
    )
    assert label_steps_paper([edit, _shell("python -m pytest -q"), write]) == ["I", "V", "V"]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            "cd /testbed && python reproduce.py 2>&1 | head -50",
            [("nav", ()), ("run", ()), ("nav", ())],
        ),
        (
            "cat <<'EOF' > repro.py\nimport x; y = 'a > b'\nEOF\npython repro.py",
            [("write", ("repro.py",)), ("run", ())],
        ),
        ("grep -rn 'pytest' setup.cfg", [("inspect", ("pytest", "setup.cfg"))]),
        ("sed -i 's/a/b/' pkg/mod.py", [("write", ("pkg/mod.py",))]),
        (
            "python -c \"open('/testbed/pkg/a.py', 'w').write(s)\"",
            [("write", ("/testbed/pkg/a.py",))],
        ),
        (
            "python - <<'PY'\nfrom pathlib import Path\nPath('pkg/b.py').write_text(t)\nPY",
            [("write", ("pkg/b.py",))],
        ),
        (
            "python - <<'PY'\nimport inspect, m\nprint(inspect.getsource(m.f))\nPY",
            [("inspect", ())],
        ),
        ("ls -la > /tmp/out.txt 2>&1", [("inspect", ())]),
        (
            "git stash && python -m pytest t.py; git stash pop",
            [("cleanup", ()), ("run", ()), ("cleanup", ())],
        ),
        ("git diff HEAD", [("review", ())]),
        ("git log --oneline -5 -- pkg/mod.py", [("inspect", ())]),
        ("pip install -e . && python -m venv .venv", [("setup", ()), ("setup", ())]),
        ("cp pkg/mod.py pkg/mod.py.bak", [("cleanup", ())]),
        ("echo 'x = 1' >> pkg/mod.py", [("write", ("pkg/mod.py",))]),
        ("echo done", [("nav", ())]),
        ("bash -c 'rm -rf build'", [("cleanup", ())]),
        ("open src/Foo.java 120", [("inspect", ("src/Foo.java",))]),
        ("create Repro.java", [("write", ("Repro.java",))]),
        ("submit", [("nav", ())]),
        ("FOO=1 timeout 60 pytest -x", [("run", ())]),
        ("python -c 'print(1' ; ls", [("run", ()), ("inspect", ())]),  # unbalanced quote: no crash
    ],
)
def test_shell_analysis(command: str, expected: list[tuple[str, tuple[str, ...]]]) -> None:
    assert [(a.action, a.paths) for a in analyse(command)] == expected


def test_reading_a_file_beside_an_edited_one_is_not_verification() -> None:
    """Guideline: re-reading an edited file *or its neighbourhood* checks the change; a different
    file that only shares the edited file's folder is other code, read to learn it (E, as the
    annotators labelled frozen s0218 and tune s0538)."""
    stored, paper, state, before = case("astropy__astropy-13236-logs-opus-4.5-pass-25081007860", 19)
    folder = str(state["file_path"]).rsplit("/", 1)[0]
    edits = [
        s
        for s in before
        if s["tool_used"] == "replace_string_in_file"
        and "ERROR" not in str(s["log_entry"]["response_preview"])[:200]  # type: ignore[index]
    ]
    assert state["tool_used"] == "read_file" and state["file_path"] not in {
        e["file_path"] for e in edits
    }
    assert any(str(e["file_path"]).rsplit("/", 1)[0] == folder for e in edits)
    assert (stored, paper) == ("E", "E")


def test_position_near_the_end_is_not_evidence_of_verification() -> None:
    name = "django__django-11066-logs-gpt-5.3-codex-fail-25119540823"
    stored, paper, state, before = case(name, 5)
    n_states = len(load(name)[1])  # the release counts the initial state
    assert 0.8 * n_states <= 5  # in the release's "last 20%" window
    assert "inspect.getsource" in command(state)
    assert project_edits(before) == []
    assert (stored, paper) == ("V", "E")


def test_agreement_with_states_labelled_by_the_guideline() -> None:
    """The measure spec §15 #19 sets for the default labeler: agreement with states labelled by
    `labeling-guideline.md`. 60 random dev states (seeded sample), labelled by hand from the
    task, the full step history and the step's result, blind to both labelers (one annotator;
    the paper's 200-state, 7-annotator set is not released). Paper labeler 60/60, released
    labeler 46/60 when this test was written."""
    table = Path(__file__).with_name("guideline_labels.csv")
    with table.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 60
    hits: Counter[str] = Counter()
    for row in rows:
        task = row["trajectory_file"].split("-logs-")[0]
        (traj,) = read_path(BENCH / "trajectories" / task / row["trajectory_file"])
        step = int(row["step_index"])
        assert traj.steps[step].kind == "tool"
        for profile in ("paper", "sdk-compat"):
            hits[profile] += label_trajectory(traj, profile)[step] == row["stage"]
    assert hits["paper"] >= 57  # ≥ 95%
    assert hits["paper"] - hits["sdk-compat"] >= 10


def test_editing_a_check_file_the_run_created_is_not_implementation() -> None:
    """labeling-guideline.md: Implementation is changing the project's source; a script the agent
    created to reproduce or check (here `create run_reproduce.sh`, then SWE-agent's `edit` of the
    open file, whose path is absolute where the create's was relative) stays E before the fix and
    V after it, and running it before the fix is Exploration. Expected stages from the raw actions."""
    from tests.conftest import DATA

    path = next(
        (DATA / "swe-agent-java").glob(
            "20240825_SWE-agent_gpt-4o-2024-05-13/trajs/fasterxml__jackson-databind-4486.traj"
        )
    )
    actions = [
        step["action"] for step in json.loads(path.read_bytes())["trajectory"]
    ]  # the raw SWE-agent actions, in order
    (traj,) = read_path(path)
    tools = [(s, lab) for s, lab in zip(traj.steps, label_trajectory(traj), strict=True) if lab]
    assert [s.command or "" for s, _ in tools][: len(actions)] == [a.strip() for a in actions][
        : len(tools)
    ]
    stages = [lab for _, lab in tools]
    first_fix = next(i for i, a in enumerate(actions) if a.startswith("edit 488:491"))
    create_sh = next(i for i, a in enumerate(actions) if a.startswith("create run_reproduce.sh"))
    assert actions[create_sh + 1].startswith("edit 1:1") and create_sh + 1 < first_fix
    assert stages[create_sh + 1] == "E"  # writing the reproduction script, before the fix
    run_sh = next(i for i, a in enumerate(actions) if a.startswith("bash run_reproduce.sh"))
    assert run_sh < first_fix and stages[run_sh] == "E"  # reproducing, before the fix
    assert stages[first_fix] == "I"
    create_check = next(
        i for i, a in enumerate(actions) if a.startswith("create compile_and_run.sh")
    )
    assert create_check > first_fix and stages[create_check + 1] == "V"


def test_swe_agent_exit_markers_are_orchestration() -> None:
    """labeling-guideline.md: bookkeeping is O. SWE-agent ends a run that ran out of budget with an
    `exit_cost` action (also `exit_context`, `exit_format`, …): nothing is run or checked."""
    from tests.conftest import DATA

    seen = 0
    for path in sorted((DATA / "swe-agent-java").glob("*/trajs/*.traj")):
        raw = [s["action"].strip() for s in json.loads(path.read_bytes())["trajectory"]]
        (traj,) = read_path(path)
        for step, stage in zip(traj.steps, label_trajectory(traj), strict=True):
            action = (step.command or "").strip()
            if stage and action.startswith("exit_"):
                assert action in raw
                seen += 1
                assert stage == "O", (path.name, action)
    assert seen >= 5


def test_running_a_script_that_rewrites_a_project_file_is_implementation() -> None:
    """labeling-guideline.md: Implementation includes "python that writes a file". A bash-only agent
    (mini-swe-agent) writes `modify_core.py` with a heredoc whose code opens
    `astropy/timeseries/core.py` for writing, then runs `python modify_core.py`: writing the
    script is making the change through the terminal (I, as the annotators labelled frozen state
    s0316, the same run's `update_tests.py`), its run is the fix (I) and the reproduction after
    it is V. Expected from the raw commands."""
    from tests.conftest import DATA

    path = (
        DATA / "mini-swe-agent-swebv/trajs/astropy__astropy-13033/astropy__astropy-13033.traj.json"
    )
    (traj,) = read_path(path)
    labels = label_trajectory(traj)
    steps = [(s.command or "", lab) for s, lab in zip(traj.steps, labels, strict=True) if lab]
    writer = next(
        i for i, (c, _) in enumerate(steps) if c.startswith("cat <<'EOF' > modify_core.py")
    )
    assert "open('astropy/timeseries/core.py', 'w')" in steps[writer][0]
    run = next(i for i, (c, _) in enumerate(steps) if c.strip() == "python modify_core.py")
    assert run > writer and steps[writer][1] == "I" and steps[run][1] == "I"
    later = next(
        i for i, (c, _) in enumerate(steps) if i > run and c == "python reproduce_issue.py"
    )
    assert steps[later][1] == "V"


def test_a_script_writing_next_to_itself_changes_nothing_in_the_project() -> None:
    """The other side of the rule above: a reproduction script that writes its own input next to
    itself (`/agent/workspace/local/pom.xml` beside `repro_literalinclude_indent.py`) is a check,
    not a fix; its first run, before any project edit, is Exploration."""
    traj, states = load("sphinx-doc__sphinx-10323-logs-gpt-5.2-codex-pass-25003569993")
    labels = label_trajectory(traj)
    runs = [
        i
        for i, s in enumerate(states)
        if i
        and command(s).startswith("python /agent/workspace/local/repro_literalinclude_indent.py")
    ]
    assert runs and project_edits(states[1 : runs[0]]) == []
    assert labels[runs[0]] == "E"


def test_a_project_module_named_like_a_check_script_is_source() -> None:
    """`sed -i … ./django/contrib/auth/validators.py` edits Django's validators module: that is the
    fix (I), although scratch scripts are often called `validate_*.py`; the reproduction run after
    it is V (labeling-guideline.md). Expected from the raw commands (mini-swe-agent django-11099)."""
    from tests.conftest import DATA

    path = DATA / "mini-swe-agent-swebv/trajs/django__django-11099/django__django-11099.traj.json"
    (traj,) = read_path(path)
    steps = [
        (s.command or "", lab)
        for s, lab in zip(traj.steps, label_trajectory(traj), strict=True)
        if lab
    ]
    fix = next(
        i for i, (c, _) in enumerate(steps) if c.startswith("sed -i") and "auth/validators.py" in c
    )
    assert steps[fix][1] == "I"
    rerun = next(
        i for i, (c, _) in enumerate(steps) if i > fix and c == "python3 reproduce_issue.py"
    )
    assert steps[rerun][1] == "V"
    assert file_role("agent/workspace/local/validate_fix.py") == "check"  # a scratch name stays


def test_swe_agent_prose_run_as_a_command_takes_the_intended_command() -> None:
    """SWE-agent format failures: the model's "DISCUSSION …" prose reached the shell as the command
    ("command not found") while the command it meant stands in its words (`find_file …`,
    `edit 1:1 … end_of_edit`). labeling-guideline.md labels the step's intent, so the intended
    command decides (hand-labelled state s0084: an intended edit of the reproduction script
    before any fix, E by all three annotators); prose with no codebase command in it stays O."""
    from tests.conftest import DATA

    prose_only = meant = 0
    for path in sorted((DATA / "swe-agent-java").glob("*/trajs/*.traj")):
        (traj,) = read_path(path)
        for step, stage in zip(traj.steps, label_trajectory(traj), strict=True):
            if not (stage and (step.command or "").lstrip().startswith("DISCUSSION")):
                continue
            if intended_command(step) is None:
                prose_only += 1
                assert stage == "O", (path.name, step.index)
            else:
                meant += 1
                assert stage != "O", (path.name, step.index)
    assert prose_only >= 20 and meant >= 20
    (traj,) = read_path(
        DATA
        / "swe-agent-java/20240825_SWE-agent_doubao-pro-128k/trajs/fasterxml__jackson-core-1142.traj"
    )
    step = traj.steps[15]
    assert step.command and step.command.startswith("DISCUSSION")
    assert (intended_command(step) or "").startswith("edit 1:1")
    assert label_trajectory(traj)[15] == "E"


def test_agreement_with_guideline_labels_on_other_formats() -> None:
    """The same measure on 30 random states of SWE-agent (Java) and mini-swe-agent runs, labelled
    blind by hand with labeling-guideline.md: paper 29/30, released labeler 16/30 when written
    (the one disagreement: a grep after the agent reverted its own fix, ambiguous)."""
    from tests.conftest import DATA

    table = Path(__file__).with_name("guideline_labels_other_formats.csv")
    with table.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 30
    hits: Counter[str] = Counter()
    for row in rows:
        (traj,) = read_path(DATA / row["path"])
        step = int(row["step_index"])
        assert traj.steps[step].kind == "tool"
        for profile in ("paper", "sdk-compat"):
            hits[profile] += label_trajectory(traj, profile)[step] == row["stage"]
    assert hits["paper"] >= 27  # 90%
    assert hits["paper"] - hits["sdk-compat"] >= 10
