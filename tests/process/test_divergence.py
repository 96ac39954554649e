"""Divergence points: the first missed best-path state, gap segments, and the release's fraction."""

from __future__ import annotations

from agentlens.process.divergence import divergence
from agentlens.process.states import ProcState, initial_state


def st(tool: str, path: str = "") -> ProcState:
    return ProcState(step_no=1, tool=tool, file_path=path, stage="E")


def test_first_missed_state_and_segments() -> None:
    path = [
        initial_state(),
        st("read_file", "a.py"),
        st("run_in_terminal"),
        st("read_file", "b.py"),
        st("x"),
    ]
    cand = [initial_state(), st("read_file", "a.py"), st("list_dir", "docs")]
    found = divergence(path, [2, 3], cand, [0, 1, -1], n_states=2)
    assert (found.index, found.step) == (2, 3)
    assert found.expected_next == "run_in_terminal"
    assert found.actual == "list_dir on docs"
    assert found.fraction == 1.5  # a path position over the candidate length: may exceed 1
    assert [(s.start_step, s.end_step) for s in found.segments] == [(3, 4)]
    assert found.segments[0].expected == ["run_in_terminal", "read_file on b.py"]
    assert "position 3 of 5" in found.reason


def test_no_divergence_when_everything_matched() -> None:
    found = divergence([initial_state()], [], [initial_state()], [0], n_states=0)
    assert found.step is None and found.fraction is None and not found.segments


def test_fraction_is_rounded_to_four_decimals() -> None:
    path = [initial_state(), st("a"), st("b")]
    found = divergence(path, [1, 2], [initial_state(), st("c")], [0, -1], n_states=3)
    assert found.fraction == round(2 / 3, 4)
    assert [(s.start_step, s.end_step) for s in found.segments] == [(2, 3)]
