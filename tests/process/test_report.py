"""The release's report fields (spec §11.4): stage comparison and quality signals, equal to the
released `quality_assessment` on the same donors and runs, and the rules on hand cases."""

from __future__ import annotations

import pytest

from agentlens.process.report import Inefficiency, StageComparison, quality_signals
from agentlens.process.score import score_trajectory
from agentlens.process.signals.workflow import StageCoverage
from tests.process.test_pta import SDK, TASK, bench_reference, bench_split, sdk_merged

LETTER = {"exploration": "E", "implementation": "I", "verification": "V", "orchestration": "O"}
NO_WASTE = Inefficiency(0, 0, 0, 0, 0)


@pytest.mark.skipif(not (SDK / "src").is_dir(), reason="released SDK not present")
def test_equal_to_the_released_quality_assessment() -> None:
    split = bench_split(TASK)
    merged = sdk_merged([d.source.path for d in split.donors])
    from swe_trace_sdk import match, trace

    ref = bench_reference(TASK)
    kinds = set()
    for run in split.scored:
        cand = trace.load(run.source.path, format="trace")
        result = match.run(cand, merged, use_llm=False)
        passed = run.outcome.status == "passed"
        report = match.quality_assessment(result, cand, merged, passed=passed)
        mine = score_trajectory(run, ref, "sdk-compat")
        theirs = [(q.signal_type, q.severity) for q in report.quality_signals]
        assert [(q.signal_type, q.severity) for q in mine.quality_signals] == theirs, run.id
        kinds |= {k for k, _ in theirs}
        for word, comp in report.stage_comparison.items():
            got = mine.stage_comparison[LETTER[word]]
            want = (len(comp.expected_steps), len(comp.matched_steps), len(comp.extra_steps))
            assert (got.expected, got.matched, got.extra) == want, (run.id, word)
            assert got.effort_ratio == pytest.approx(comp.effort_ratio)
    assert len(kinds) >= 3


def coverage(total: dict[str, int], matched: dict[str, int]) -> StageCoverage:
    return StageCoverage(total, matched)


def signals(**kw: object) -> list[str]:
    args: dict[str, object] = {
        "passed": True,
        "failed": False,
        "coherence": 0.9,
        "coverage": 80.0,
        "completeness": 1.0,
        "n_candidate": 10,
        "waste": NO_WASTE,
        "stages": coverage({"E": 2, "I": 1, "V": 1}, {"E": 2, "I": 1, "V": 1}),
        "comparison": {},
        "stage_order_match": True,
    }
    args |= kw
    return [q.signal_type for q in quality_signals(**args)]  # type: ignore[arg-type]


def test_rules_on_hand_cases() -> None:
    assert signals() == ["clean_ideal_pass"]
    # 3 wasted of 10 states (> 20%) while passing
    waste = Inefficiency(1, 0, 2, 0, 3)
    assert signals(waste=waste, coverage=60.0) == [
        "inefficient_path_despite_success",
        "low_gt_coverage",
    ]
    # V coverage 0/2: missing when failed, low otherwise
    low_v = coverage({"V": 2, "E": 1}, {"E": 1})
    assert signals(stages=low_v, passed=False, failed=True, coverage=50.0, completeness=0.5) == [
        "missing_verification",
        "incomplete_coverage",
    ]
    assert signals(stages=low_v)[0] == "low_verification"
    explore = {"E": StageComparison(2, 2, 0, 3, True, 2.5)}
    assert "excessive_exploration" in signals(comparison=explore)
    no_o = coverage({"O": 1, "E": 1}, {"E": 1})
    assert "missing_planning" in signals(stages=no_o)
