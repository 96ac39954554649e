"""Quality Index: all 17 leaderboard rows of spec §12.1 reproduced from their six components."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlens.reviews.qi import quality_index

# model, QI, Formal, End, Instr, Pitfalls, Pleasant, Tools (all %), from spec-reviews.md §12.1
LEADERBOARD = """
Explyt Opus 4.7|81.5|81.2|94|75|64|92|83
Claude Code Opus 4.7|76.2|81.2|91|69|58|78|80
Explyt GPT-5.5|73.0|75.0|78|70|55|80|80
Explyt Sonnet 4.6|70.2|81.2|66|62|56|73|83
Claude Code Sonnet 4.6|70.1|90.6|80|62|55|75|58
Explyt GLM-5.1 5 runs|67.3|72.5|71.8|57.4|53.2|75.8|73.0
Explyt DeepSeek V4 Flash|64.8|87.5|73|50|50|66|62
Explyt DeepSeek V4 Pro|64.1|87.5|66|53|48|69|61
Claude Code Haiku 4.5|63.6|84.4|78|58|48|58|55
Explyt GLM-5.1|60.6|80.6|60|53|48|61|61
Explyt Haiku 4.5|58.2|75.0|72|55|47|47|53
Explyt Gemini 3.1 Pro|54.5|71.9|62|52|41|50|50
Explyt Gemini 3 Flash|52.7|75.0|66|48|41|39|47
Explyt MiniMax 2.7|50.8|70.0|52|47|38|43|55
Explyt Qwen 3.6 Plus|49.1|65.6|58|45|39|42|45
Explyt Mimo V2.5 Pro|45.1|62.5|50|38|32|36|52
Explyt Kimi K2.6|28.1|42.9|29|33|19|21|24
"""
ROWS = [line.split("|") for line in LEADERBOARD.strip().splitlines()]
DIMS = ("EndResult", "InstructionCompliance", "Pitfalls", "Pleasantness", "ToolCalls")


def test_leaderboard_has_17_rows() -> None:
    assert len(ROWS) == 17


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_leaderboard_row_reproduces_within_0_05(row: list[str]) -> None:
    _model, qi, formal, *judge = row
    result = quality_index(
        float(formal) / 100, {d: float(v) / 100 for d, v in zip(DIMS, judge, strict=True)}
    )
    # the board rounds to 0.1, so 28.15 shows as 28.1; 1e-9 absorbs float sums (3.12+ `sum`
    # compensates, giving 28.150000000000002 where 3.11 gives 28.149999999999995)
    assert abs(result.value - float(qi)) <= 0.05 + 1e-9, result.reason
    assert result.warnings == []


def test_missing_component_makes_the_qi_na_with_the_reason() -> None:
    """Issue 24: a mean over no scored item is not 0; the QI says which component it lacks."""
    result = quality_index(0.5, {"EndResult": 1.0, "Pitfalls": 0.5})
    assert result.value is None and result.shown == "n/a"
    assert result.reason == (
        "n/a: no scored item for InstructionCompliance, Pleasantness, ToolCalls"
    )
    assert result.to_dict()["quality_index"] is None


def test_released_rule_counts_a_missing_component_as_zero_with_a_warning() -> None:
    result = quality_index(0.5, {"EndResult": 1.0, "Pitfalls": 0.5}, missing="zero")
    assert result.value == pytest.approx(100 * 2.0 / 6)
    assert sum("missing" in w for w in result.warnings) == 3


def test_low_formal_rate_and_percent_inputs_warn() -> None:
    full = dict.fromkeys(DIMS, 0.5)
    assert any("corruption" in w for w in quality_index(0.2, full).warnings)
    assert any("outside" in w for w in quality_index(81.2, full).warnings)


def test_a_qi_without_judge_samples_has_no_interval() -> None:
    """The CI is the judge's sampling spread: with one sample per item there is none to show."""
    result = quality_index(0.812, dict.fromkeys(DIMS, 0.8))
    assert result.variance is None and result.ci is None
    assert "ci95" not in result.to_dict() and "judge sampling" not in result.reason


@pytest.mark.parametrize(
    ("formal", "score", "value"),
    [(0.3, 0.0, 5.0), (1.0, 1.0, 100.0)],  # 100 × (0.3 + 0)/6 = 5; 100 × 6/6 = 100
)
def test_the_ends_of_the_ranges_do_not_warn(formal: float, score: float, value: float) -> None:
    """Spec §7 warns when FV < 0.3 (not at 0.3); 0 and 1 are inside [0, 1]."""
    result = quality_index(formal, dict.fromkeys(DIMS, score))
    assert result.value == pytest.approx(value)
    assert result.warnings == []
    assert quality_index(formal, {**dict.fromkeys(DIMS, score), "EndResult": 1.001}).warnings == [
        "EndResult = 1.001 is outside [0, 1]; pass fractions, not percents"
    ]


def test_a_runs_qi_takes_the_formal_pass_rate_of_its_scenarios(tmp_path: Path) -> None:
    """`compare`'s QI per run: FV = Σ formal_result / scenarios (spec §7), here 2 of 3, with
    every judge mean 1 on real runs: 100 × (2/3 + 5)/6 = 94.44; no formal results → n/a."""
    from agentlens.formats.stream import read_paths
    from agentlens.jsonio import dump
    from agentlens.reviews.documents import load_reviews, reviews_document
    from agentlens.reviews.qi import reviews_qi
    from tests.conftest import BENCH
    from tests.reviews.test_sxs_run import review

    trajs = read_paths([BENCH / "trajectories" / "psf__requests-1724" / "*-logs-gpt-4.1-*"])
    fine = "<Review>fine</Review><Score>1</Score>"
    reviews = [review(t, dict.fromkeys(DIMS, fine)) for t in trajs.trajectories]
    dump(reviews_document("judge", reviews), tmp_path / "reviews.json")
    result = reviews_qi(load_reviews(tmp_path / "reviews.json"), [1, 0, 1])
    assert result.components["Formal"] == pytest.approx(2 / 3)
    assert result.value == pytest.approx(100 * (2 / 3 + 5) / 6)
    assert reviews_qi(load_reviews(tmp_path / "reviews.json"), None).value is None
