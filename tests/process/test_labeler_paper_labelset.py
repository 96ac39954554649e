"""`paper` labeler rules read from labeling-guideline.md on states of the hand-labelled set's TUNE
part (tests/process/labelled_states), each pinned on the real step; and the labeler's agreement on
the first FROZEN part (only its overall figure is asserted). That part was scored, then studied
(it is spent: test_labeler_paper_round3.py pins the rules read from it); a fresh frozen round
measures the labeler now."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlens.process.labeler import label_trajectory
from agentlens.process.labeler_paper import file_role
from agentlens.trajectory import ToolCategory
from tests.process.label_scripts import ANNOTATIONS, adjudicated_stages, script

# Frozen-part agreement reached by the `paper` labeler (scripts/labelset_agreement.py --labeler
# paper): 248 when the round was scored, 268 after round 3's rules; losing a state fails here.
FROZEN_FLOOR = 268


@pytest.fixture(scope="module")
def tune(data_dir: Path) -> dict[str, object]:
    return {s.state_id: s for s in script("_labelset").read_states() if s.split == "tune"}


@pytest.fixture(scope="module")
def gold() -> dict[str, str]:
    return adjudicated_stages()


# (tune state, adjudicated stage, what identifies the step, the guideline rule it pins)
CASES = [
    ("s0102", "E", "AskUserQuestion", "a clarifying question to the user gathers information"),
    ("s0320", "E", "AskUserQuestion", "a clarifying question to the user gathers information"),
    ("s0127", "E", 'chat_npc "David"', "a message that asks gathers information"),
    ("s0401", "O", 'chat_npc "David"', "a message that only reports is bookkeeping"),
    ("s0452", "O", 'chat_npc "Mark"', "a message that only reports is bookkeeping"),
    ("s0421", "I", "| mail -s", "mailing the file is the non-coding task's requested action"),
    ("s0044", "I", "bd create", "creating the tracker records the task asks for"),
    ("s0447", "I", "bd create", "creating the tracker records the task asks for"),
    ("s0048", "I", "str_replace_editor", "a file written before exploring is the deliverable"),
    ("s0270", "I", "Edit", "a file written before exploring is the deliverable (even in /tmp)"),
    ("s0285", "V", "python /tmp/decorator_example.py", "running the deliverable after writing it"),
    ("s0084", "E", "DISCUSSION", "prose ran as the command: the intended edit decides"),
    ("s0135", "O", "which javac", "a toolchain probe after the change is environment setup"),
    ("s0183", "E", "python2 --version", "the same probe before any change probes the problem"),
    ("s0140", "V", "ls astropy/modeling/tests", "listing the edited file's folder after the fix"),
    ("s0601", "I", "bd dep add", "linking the tracker records the task asks for"),
    ("s0553", "O", "413s/query.clone().get_compiler/query.get_compiler/", "undoing the edit"),
    ("s0595", "E", "sed -n '350,400p'", "after every edit is undone, reading is exploring again"),
    ("s0482", "E", "python reproduce_issue_refcount.py", "running it without the fix explores"),
    ("s0551", "I", "p.write_text(s)", "python writing a project file through a Path variable"),
    ("s0607", "V", "cat pyproject.toml", "re-reading a file the run's git diff showed changed"),
    ("s0633", "V", 'find . -name "*test*.py"', "looking for the tests to run after the change"),
    ("s0667", "V", "find_file", "looking for the tests to run after the change"),
    ("s0696", "O", "JDK installation instructions", "searching how to install a tool is setup"),
    ("s0490", "O", "JDK installation instructions", "searching how to install a tool is setup"),
]


@pytest.mark.parametrize(("state_id", "stage", "marker", "rule"), CASES)
def test_rule_on_a_tune_state(
    tune: dict[str, object], gold: dict[str, str], state_id: str, stage: str, marker: str, rule: str
) -> None:
    state = tune[state_id]
    traj = script("_labelset").trajectory_of(state)
    step = traj.steps[state.step_index]  # type: ignore[attr-defined]
    assert marker in f"{step.tool_name} {step.command or ''}", rule
    assert gold[state_id] == stage
    assert label_trajectory(traj, "paper")[state.step_index] == stage, rule  # type: ignore[attr-defined]


def test_tool_probe_needs_the_change_and_a_bare_command() -> None:
    from agentlens.process.labeler_paper_tools import command_stage

    assert command_stage("which javac", changed=True) == "O"
    assert command_stage("which javac", changed=False) is None
    assert command_stage("javac -cp . Test.java", changed=True) is None
    assert command_stage('chat_npc "Ann" "Is it ready?"', changed=False) == "E"
    assert command_stage('chat_npc "Ann" "Done: sent it"', changed=True) == "O"
    assert command_stage("gh issue create --title x", changed=False) == "I"
    assert command_stage("gh issue list", changed=False) is None
    assert command_stage("bd dep add spotter-1.2 spotter-1.1", changed=False) == "I"
    assert command_stage("bd update spotter-1 --status in_progress", changed=True) is None


def test_only_an_exact_inverse_edit_is_an_undo() -> None:
    """labeling-guideline.md's "cleanup … (git stash/restore …)": `s/b/a/` at the place where
    `s/a/b/` was made puts the file back; another edit of the same text is still the fix."""
    from agentlens.process.labeler_paper import label_steps_paper
    from agentlens.trajectory import Step

    def sed(expr: str) -> Step:
        command = f"sed -i '{expr}' pkg/core.py"
        return Step(
            index=0,
            kind="tool",
            tool_name="bash",
            arguments={"command": command},
            command=command,
            category=ToolCategory.EDIT,
            files=["pkg/core.py"],
        )

    def read() -> Step:
        return Step(
            index=0,
            kind="tool",
            tool_name="bash",
            arguments={"command": "cat pkg/core.py"},
            command="cat pkg/core.py",
            category=ToolCategory.READ_FILE,
            files=["pkg/core.py"],
        )

    undo = [sed("4s/a/b/"), sed("4s/b/a/"), read()]
    other_place = [sed("4s/a/b/"), sed("5s/b/a/"), read()]
    assert label_steps_paper(undo) == ["I", "O", "E"]
    assert label_steps_paper(other_place) == ["I", "I", "V"]


def test_search_rules_need_a_change_and_their_pattern() -> None:
    from agentlens.process.labeler_paper_tools import searches_install

    assert searches_install('search_dir "JDK installation instructions"')
    assert not searches_install('search_dir "install_requires"')  # a word of the code, not prose
    assert not searches_install('grep -rn "def install" src')


def test_frozen_agreement_stays_at_least_what_was_reached(data_dir: Path) -> None:
    """Agreement with the adjudicated labels on the frozen part: the figure only, no state."""
    agreement = script("labelset_agreement")
    states = script("_labelset").read_states()
    truth = agreement.read_annotations(ANNOTATIONS)
    frozen = [s for s in states if s.split == "frozen" and truth.get(s.state_id)]
    problems: list[str] = []
    predicted = agreement.labeler_stages(frozen, "paper", problems)
    hits = sum(predicted.get(s.state_id) == truth[s.state_id] for s in frozen)
    assert not problems and len(frozen) == 279
    assert hits >= FROZEN_FLOOR, f"frozen agreement {hits}/{len(frozen)} < {FROZEN_FLOOR}"


def test_the_agents_plan_file_is_orchestration(tune: dict[str, object]) -> None:
    """labeling-guideline.md: "think/plan steps, todo lists" are O. In the tune part's Claude Code
    beads session (states s0044, s0102, s0447) the agent leaves plan mode by writing
    `/home/marco/projects/spotter/plan.md`: a plan, not a change to the project, so the run has
    not changed anything until it creates the beads (I)."""
    traj = script("_labelset").trajectory_of(tune["s0447"])
    labels = label_trajectory(traj, "paper")
    write = next(s for s in traj.steps if s.tool_name == "Write")
    assert write.files == ["/home/marco/projects/spotter/plan.md"]
    assert labels[write.index] == "O"
    first_bead = next(s for s in traj.steps if (s.command or "").startswith("bd create"))
    assert first_bead.index > write.index and labels[first_bead.index] == "I"
    assert file_role("/testbed/docs/plan.md") == "source"  # project documentation stays source
