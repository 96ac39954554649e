"""Quality Index: all 17 leaderboard rows of spec §12.1 reproduced from their six components."""

from __future__ import annotations

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
