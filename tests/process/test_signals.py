"""The four signals (and the released score's extra inputs) against hand-computed examples from
the spec (§7) and independent formulas."""

from __future__ import annotations

import csv
import math
import re

import pytest
from scipy.spatial.distance import jensenshannon

from agentlens.formats.load import read_path
from agentlens.process.signals import Signal
from agentlens.process.signals.coherence import (
    classify,
    coherence,
    coherence_value,
    retry_excess,
    transitions,
)
from agentlens.process.signals.coverage import (
    all_states_coverage,
    best_path_coverage,
    file_coverage,
)
from agentlens.process.signals.structure import f1, ordered_recall, ordered_struct, set_f1
from agentlens.process.signals.temporal import distribution, jsd, segments, temporal
from agentlens.process.signals.workflow import (
    StageCoverage,
    lcs,
    stage_coverage,
    workflow_similarity,
)
from agentlens.process.states import ProcState, initial_state, states_from_trajectory
from tests.conftest import BENCH

ANNOTATIONS = BENCH / "annotations" / "trajectories.csv"


def run(stages: str, tools: str | None = None, files: str | None = None) -> list[ProcState]:
    tools = tools or "t" * len(stages)
    files = files or "abcdefghijklmnopqrstuvwxyz"[: len(stages)]
    body = [
        ProcState(step_no=i + 1, tool=t, file_path=f, stage=s)
        for i, (s, t, f) in enumerate(zip(stages, tools, files, strict=True))
    ]
    return [initial_state(), *body]


def test_coherence_e_e_i_v_is_one() -> None:
    signal = coherence(run("EEIV"))
    assert signal.value == 1.0
    assert "2 pivots" in signal.reason and "0 retries" in signal.reason


def test_coherence_chaotic_example_formula() -> None:
    """Paper: 6 pivots, 4 deepen, 2 backtracks, 4 retries over 12 transitions; the formula gives
    0.75 × (1 − 4/12) = 0.50 (the paper prints 0.51)."""
    # E I V (pivots 2) → E (backtrack) → I V (2 pivots) → E (backtrack) → I V (2 pivots) → V V V V V
    # the final V-run of length 5 on one (tool, file) adds 3 retries; a second short run adds one.
    assert coherence_value(6, 0, 2, 4, 12) == pytest.approx(0.50)
    # The counts cannot all come from one real run (4 retries need ≥ 5 deepen transitions), so the
    # states below keep the 6/2/4 transition mix and show the retry term separately.
    stages = "EIVEIVEIVVVVV"
    states = run(stages, files="abcdefghiiiii")
    kinds = transitions(stages)
    assert (kinds.count("pivot"), kinds.count("backtrack"), kinds.count("deepen")) == (6, 2, 4)
    assert retry_excess(states) == 3
    assert coherence(states).value == pytest.approx(0.75 * (1 - 3 / 12))
    states[-1].file_path = states[-2].file_path = "x"  # split the run: 3 + 2 → 1 retry
    assert retry_excess(states) == 1


def test_transition_classes() -> None:
    assert [classify(a, b) for a, b in ["EI", "IE", "IO", "OE", "OO", "VV"]] == [
        "pivot",
        "backtrack",
        "confirm",
        "backtrack",
        "deepen",
        "deepen",
    ]
    assert coherence(run("E")).value == 1.0  # no transitions
    assert coherence(run("EEE", files="xyz")).value == 1.0  # only deepen


def test_temporal_segments_follow_n_div_3() -> None:
    assert segments("EIVOEIV") == [["E", "I"], ["V", "O"], ["E", "I", "V"]]
    assert segments("EI") == [["E"], ["I"], []]
    assert segments("E") == [["E"], [], []]
    assert distribution([]) == [0.25] * 4


def test_temporal_matches_an_independent_jsd() -> None:
    p, q = distribution(["E", "E", "I"]), distribution(["I", "V"])
    assert jsd(p, q) == pytest.approx(jensenshannon(p, q, base=2) ** 2)
    # segments and Laplace-smoothed distributions by hand, not by the code under test
    ca, cb = ["EEE", "III", "VVV"], ["EEI", "IIV", "VVO"]
    expected = (
        1
        - sum(
            jensenshannon(_smoothed(a), _smoothed(b), base=2) ** 2
            for a, b in zip(ca, cb, strict=True)
        )
        / 3
    )
    assert temporal("EEEIIIVVV", "EEIIIVVVO").value == pytest.approx(expected)
    assert temporal("EIV", "EIV").value == pytest.approx(1.0)
    assert temporal("", "EIV").value == 0.0


def _smoothed(stages: str, alpha: float = 0.01) -> list[float]:
    counts = [stages.count(st) + alpha for st in "EIVO"]
    return [c / sum(counts) for c in counts]


def test_jsd_of_disjoint_distributions_is_one_bit() -> None:
    """Without smoothing (α = 0) zero probabilities occur; their KL terms are 0, not an error."""
    assert jsd([1, 0, 0, 0], [0, 1, 0, 0]) == 1.0
    assert distribution("EEIV") == pytest.approx(_smoothed("EEIV"))


def test_stage_coverage_edges() -> None:
    """Spec §6: stage completeness 1.0 when the path has no labelled stage, weighted 0 then;
    a stage absent from the path has coverage 0; O alone weighs 0.5 (0.5·1 / 0.5·1 = 100 %)."""
    empty = StageCoverage({}, {})
    assert (empty.completeness, empty.weighted, empty.percent("V")) == (1.0, 0.0, 0.0)
    assert StageCoverage({"O": 1}, {"O": 1}).weighted == 100.0
    assert StageCoverage({"E": 1}, {"E": 1}).percent("V") == 0.0
    assert f1(0.5, 0.5) == 0.5  # percent units: small shares still count


def test_workflow_similarity_is_lcs_over_the_longer() -> None:
    assert lcs("EEIV", "EIVV") == 3
    assert workflow_similarity("EEIV", "EIVVO").value == pytest.approx(3 / 5)
    assert workflow_similarity("", "").value == 1.0
    assert workflow_similarity("E", "") == Signal("workflow", 0.0, "one stage sequence empty → 0")


def test_structure_and_coverage() -> None:
    """Paper App. B.5: ordered recall 6/6 and precision 6/8 → F1 0.86 (percent units here)."""
    path = run("EEIIVV")[1:]
    lists = {id(s): [k] for k, s in enumerate(path)}
    signal = ordered_struct(path, 8, lambda s: lists[id(s)], 8)
    assert signal.value == pytest.approx(100 * 2 * 1.0 * 0.75 / 1.75)
    assert round(signal.value / 100, 2) == 0.86
    assert "6/6" in signal.reason and "6/8" in signal.reason
    swapped = {id(path[0]): [3], id(path[1]): [1]}
    assert ordered_recall(path[:2], lambda s: swapped[id(s)]) == 1  # second state is behind
    assert set_f1(2, 6, 9).value == pytest.approx(2 * (2 / 9) * (2 / 6) / ((2 / 9) + (2 / 6)) * 100)
    assert best_path_coverage(12, 15).value == 80.0
    both = {id(path[0]): [0], id(path[1]): [0]}
    assert all_states_coverage(path[:2], 1, lambda s: both[id(s)]).value == 50.0  # one candidate


def test_file_coverage() -> None:
    ref = [ProcState(step_no=1, tool="replace_string_in_file", file_path=f) for f in "ab"]
    cand = [ProcState(step_no=1, tool="create_file", file_path="a")]
    assert file_coverage(ref, cand).value == 50.0
    assert file_coverage([], cand).value == 100.0


def test_stage_coverage_weights_and_bottleneck() -> None:
    path = run("EIIV")
    cov = stage_coverage(path, [0, 3, -1, 5, -1])
    assert cov.total == {"E": 1, "I": 2, "V": 1} and cov.matched == {"E": 1, "I": 1}
    assert cov.completeness == pytest.approx(2 / 3)
    assert cov.weighted == pytest.approx((1 * 1 + 3 * 1) / (1 * 1 + 3 * 2 + 2 * 1) * 100)
    assert cov.bottleneck == 0.0
    assert (
        cov.completeness_signal().reason == "stages matched ['E', 'I'] of ['E', 'I', 'V'] = 0.667"
    )
    assert math.isclose(cov.percent("I"), 50.0)


def test_coherence_reproduces_the_released_column_on_every_dev_run() -> None:
    """Φ_coh reads the run alone (its states and stored labels, no reference), so the release's
    `coherence_score` must come back exactly for all 399 dev runs; and every reason's numbers
    recompute to its value (p + c + b + deepen = transitions, progress = (p + c)/(p + c + b))."""
    rows = {r["trajectory_id"]: r for r in csv.DictReader(ANNOTATIONS.open())}
    shown = re.compile(
        r"\((\d+) pivots \+ (\d+) confirms\) / \(\d+ \+ \d+ \+ (\d+) backtracks\) = ([\d.]+); "
        r"× \(1 − (\d+) retries / (\d+) transitions\) \[(\d+) deepen\] = ([\d.]+)"
    )
    confirms = retries = 0
    for path in sorted((BENCH / "trajectories").glob("*/*.json")):
        (traj,) = read_path(path)
        states = states_from_trajectory(traj, [s.stored_stage for s in traj.steps], use_raw=True)
        signal = coherence(states)
        assert signal.value == float(rows[traj.id]["coherence_score"]), traj.id
        found = shown.fullmatch(signal.reason)
        if found is None:  # fewer than two labelled states
            assert signal.value == 1.0 and signal.reason.startswith("fewer than two"), traj.id
            continue
        p, c, b, progress, r, n, d, value = found.groups()
        p, c, b, r, n, d = map(int, (p, c, b, r, n, d))
        assert p + c + b + d == n, traj.id
        assert float(progress) == round((p + c) / (p + c + b) if p + c + b else 1.0, 3), traj.id
        assert float(value) == round(float(rows[traj.id]["coherence_score"]), 3), traj.id
        confirms, retries = confirms + c, retries + r
    assert confirms > 0 and retries > 0  # the data exercises both terms


def test_coherence_edge_counts_follow_the_spec() -> None:
    """§7.4: no transitions → 1.0; only a backtrack → progress 0/1 = 0; a run of L identical
    states adds L − 2 retries, so two add none even where the list starts."""
    assert coherence_value(0, 0, 0, 0, 0) == 1.0
    only_back = coherence(run("IE"))
    assert only_back.value == 0.0
    assert only_back.reason.startswith("(0 pivots + 0 confirms) / (0 + 0 + 1 backtracks) = 0.000;")
    two, three = run("EE", files="aa")[1:], run("EEE", files="aaa")[1:]
    assert (retry_excess(two), retry_excess(three)) == (0, 1)
    # states with no tool, file or stage (as the release's `_count_blind_retries`) repeat nothing
    assert retry_excess([ProcState(step_no=i) for i in range(4)]) == 0


def _lcs_table(a: str, b: str) -> int:
    """The textbook O(len(a)·len(b)) dynamic programme."""
    row = [0] * (len(b) + 1)
    for x in a:
        prev_diag, row[0] = 0, 0
        for j, y in enumerate(b, 1):
            prev_diag, row[j] = row[j], prev_diag + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def test_bit_parallel_lcs_equals_the_table_on_real_stage_strings() -> None:
    """Workflow similarity's LCS (Hyyrö's bit-parallel form) against the plain dynamic programme
    on the stored stage letters of one run per dev task against each other (and reversed)."""
    runs = [sorted(task.glob("*.json"))[0] for task in sorted((BENCH / "trajectories").iterdir())]
    letters = ["".join(s.stored_stage or "" for s in read_path(p)[0].steps) for p in runs]
    assert len(letters) == 10 and len(set("".join(letters))) == 4
    for a in letters:
        for b in [*letters, *(x[::-1] for x in letters)]:  # reversed: b starts with another stage
            assert lcs(a, b) == _lcs_table(a, b), (a, b)
