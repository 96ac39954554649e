"""The five waste detectors on hand-built runs (rules of spec §10), localised to step indices."""

from __future__ import annotations

from agentlens.process.states import ProcState, initial_state
from agentlens.process.waste import detect_all
from agentlens.process.waste.cycles import cyclic_patterns, find_cycles
from agentlens.process.waste.redundant import redundant_steps
from agentlens.process.waste.regression import reference_regressions, regression_loops
from agentlens.process.waste.retries import blind_retries
from agentlens.process.waste.tokens import sdk_waste, wasted_tokens
from agentlens.process.waste.unnecessary import unnecessary_exploration


def states(spec: str, tool: str = "read_file") -> list[ProcState]:
    """'E:a I:b' → states with stage and file; step_index = 10 + position; 100 tokens each."""
    out = []
    for i, item in enumerate(spec.split()):
        stage, _, path = item.partition(":")
        out.append(
            ProcState(
                step_no=i + 1,
                tool=tool,
                stage=stage,
                file_path=path,
                step_index=10 + i,
                input_tokens=90,
                output_tokens=10,
            )
        )
    return out


def test_regression_loop_needs_two_exploration_steps_before_the_next_edit() -> None:
    cand = states("E:a I:m E:b E:c I:m V:t E:d I:m")
    found = regression_loops(cand, [])
    assert (found.count, found.wasted_steps) == (1, 2)  # E:b E:c; the single E:d is not a loop
    assert found.instances[0].steps == (12, 13)
    assert found.wasted_tokens == 200
    assert "1 instance, 2 wasted steps" in found.reason


def test_regression_in_the_reference_at_the_same_position_is_allowed() -> None:
    ref = [initial_state(), *states("E:a I:m E:x E:y I:m V:t E:z")]
    assert reference_regressions([s.stage for s in ref]) == {3, 7}
    cand = states("E:a I:m E:b E:c I:m V:t E:d")
    # candidate loop starts at 2 of 7 → reference position int(2/7·8) = 2 ∉ {3} → counted
    assert regression_loops(cand, ref).count == 1
    ref_shifted = [initial_state(), *states("E:a E:q I:m E:x E:y I:m")]
    assert reference_regressions([s.stage for s in ref_shifted]) == {4}
    cand2 = states("E:a E:a2 I:m E:b E:c I:m")  # loop at 3 of 6 → int(3/6·7) = 3 ∉ {4}
    assert regression_loops(cand2, ref_shifted).count == 1


def test_blind_retries_count_the_excess_over_two() -> None:
    cand = states("E:a E:a E:a E:a I:m I:m I:m V:t")
    found = blind_retries(cand, [])
    assert (found.count, found.wasted_steps) == (2, 3)
    assert [i.steps for i in found.instances] == [(12, 13), (16,)]
    ref = states("I:m I:m I:m")
    assert blind_retries(cand, ref).count == 1  # the I-run is a reference pattern


def test_redundant_reads_reset_after_an_edit() -> None:
    cand = states("E:a E:b E:a I:m E:a E:a")
    found = redundant_steps(cand, [])
    assert (found.count, found.wasted_steps) == (2, 2)  # third state, and the last one
    ref = [initial_state(), *states("E:a V:t E:a")]
    assert redundant_steps(cand, ref).count == 0  # the reference reads `a` twice


def test_unnecessary_exploration_skips_tests_and_reference_files() -> None:
    cand = states("E:a I:m E:x E:tests/t.py E:m E:y")
    found = unnecessary_exploration(cand, [], {"m"})
    assert found.count == 2 and [i.steps for i in found.instances] == [(12,), (15,)]
    ref = [initial_state(), *states("I:m E:y")]
    assert unnecessary_exploration(cand, ref, {"m"}).count == 1


def test_cycles_of_two_to_four_steps() -> None:
    cand = states("E:a E:b E:a E:b E:a E:b I:m")
    assert find_cycles(cand)[0][:3] == (0, 2, 3)
    found = cyclic_patterns(cand, [])
    assert (found.count, found.wasted_steps) == (1, 4)
    same = states("E:a E:a E:a E:a")
    assert cyclic_patterns(same, []).count == 0  # a retry, not a cycle


def test_detect_all_and_the_token_union() -> None:
    cand = states("E:a E:a E:a E:a I:m E:b E:c I:m")
    found = detect_all(cand, [], [], set())
    assert set(found) == {
        "regression_loop",
        "blind_retry",
        "redundant_step",
        "unnecessary_exploration",
        "cyclic_pattern",
    }
    full = [initial_state(), *cand]
    repeats = found["blind_retry"].positions | found["cyclic_pattern"].positions
    _, indices = sdk_waste(cand, full, [0] + [-1] * len(cand), [], repeats)
    assert {2, 3} <= indices
    assert wasted_tokens(cand, indices) == (90 * len(indices), 10 * len(indices))
