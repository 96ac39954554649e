"""SxS runner: order-swapped replay, Pitfalls mapping override, task selection, Unknown reviews.
A scripted provider gives exact answers (a fixed score in both orders = a position-biased judge)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.formats.stream import read_paths
from agentlens.jsonio import dump
from agentlens.providers import ChatRequest, ChatResponse, LLMClient
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.compare import RunSummary, compare_runs, sxs_check
from agentlens.reviews.documents import reviews_document
from agentlens.reviews.judge.judge import DimensionReview, TrajectoryReview
from agentlens.reviews.judge.parse import parse_review
from agentlens.reviews.markdown import compare_markdown
from agentlens.reviews.sxs.cell import Cell
from agentlens.reviews.sxs.judge_pairs import (
    DimensionResult,
    Side,
    judge_alert,
    run_sxs,
    select_tasks,
)
from agentlens.reviews.sxs.pairing import pair_runs
from agentlens.reviews.sxs.parse import parse_comparison
from agentlens.reviews.sxs.stats import (
    conservative_trinomial_test,
    score_flags,
    trinomial_from_scores,
)
from agentlens.reviews.telemetry import RunTelemetry
from tests.conftest import BENCH
from tests.providers.fault_server import FaultServer


class Fixed:
    name = "fixed"
    supports_logprobs = False

    def __init__(self, text: str) -> None:
        self.text = text
        self.prompts: list[str] = []

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.prompts.append(request.messages[-1]["content"])
        return ChatResponse(text=self.text)

    async def option_logprobs(self, *a, **k):  # pragma: no cover
        raise NotImplementedError


def review(traj, answers: dict[str, str]) -> TrajectoryReview:
    dims = {}
    for dim, text in answers.items():
        parsed = parse_review(text, len(traj.steps))
        dims[dim] = DimensionReview(dim, parsed.score, parsed.unscored_reason, parsed, text, 0)
    return TrajectoryReview(traj.id, traj.task_id, len(traj.steps), 0, 0, dims)


PIT_A = "<Review>x\nPitfall: loop | Category: Tool/Harness | Severity: high | Frequency: repeated | Evidence: S2</Review><Score>0</Score>"
PIT_B = "<Review>y\nPitfall: typo | Category: Logic/Code | Severity: low | Frequency: once | Evidence: S1</Review><Score>1</Score>"


@pytest.fixture(scope="module")
def sides() -> tuple[Side, Side]:
    trajs = read_paths(
        [
            BENCH / "trajectories" / "psf__requests-1724",
            BENCH / "trajectories" / "pallets__flask-5014",
        ]
    ).trajectories
    a = [t for t in trajs if t.model == "gpt-4.1"]
    b = [t for t in trajs if t.model == "sonnet-4.5"]
    ra = [
        review(t, {"Pitfalls": PIT_A, "ToolCalls": "<Review>fine</Review><Score>1</Score>"})
        for t in a
    ]
    rb = [review(t, {"Pitfalls": PIT_B, "ToolCalls": "no score here"}) for t in b]
    paired = pair_runs(a, b, ra, rb)
    return paired.a, paired.b


def test_task_selection_is_the_sorted_common_keys(sides) -> None:
    a, b = sides
    assert select_tasks(a, b, ["ToolCalls"]) == sorted(set(a.trajectories) & set(b.trajectories))


def test_position_biased_judge_is_inconsistent_and_cancels(sides) -> None:
    a, b = sides
    provider = Fixed(
        "<Comparison>Same.\nAspect: tools | Winner: A1 | Severity: high | Evidence: A1 S1</Comparison><PairwiseScore>-3</PairwiseScore>"
    )
    result = asyncio.run(run_sxs(LLMClient(provider, cache=None), a, b, dimensions=["ToolCalls"]))[
        "ToolCalls"
    ]
    n = len(result.cells)
    assert n == len(select_tasks(a, b, ["ToolCalls"])) > 2  # repeats of 2 tasks
    assert len(provider.prompts) == 2 * n  # forward + swapped per pair
    for cell in result.cells:
        # always "Agent 1 better": forward −3, swapped −3 read back as +3
        assert (cell.forward, cell.swapped, cell.score, cell.consistent) == (-3, 3, 0.0, False)
    assert result.consistency_rate == 0.0
    assert result.flags.mean == 0.0
    assert result.trinomial is not None
    assert (result.trinomial.wins, result.trinomial.ties, result.trinomial.losses) == (0, n, 0)
    assert result.to_dict()["trinomial"]["ties"] == n
    # run B's ToolCalls review is unscored, so both reviews are shown as Unknown
    assert all(p.count("Unknown") >= 2 for p in provider.prompts)


def test_pitfalls_score_comes_from_burden_totals(sides) -> None:
    a, b = sides
    provider = Fixed("<PairwiseScore>5</PairwiseScore>")
    result = asyncio.run(run_sxs(LLMClient(provider, cache=None), a, b, dimensions=["Pitfalls"]))[
        "Pitfalls"
    ]
    # A: high repeated = 14; B: low once = 1; Delta = 1 − 14 = −13 → magnitude 3, B better: +3
    for cell in result.cells:
        assert (cell.forward, cell.swapped, cell.consistent) == (3, 3, True)
        assert cell.pitfalls.line == "Totals: A1=14, A2=1, Delta=-13 => Score=3"
    assert "Totals: A1=14, A2=1, Delta=-13 => Score=3" in provider.prompts[0]
    assert any("Totals: A1=1, A2=14, Delta=13 => Score=-3" in p for p in provider.prompts)
    assert result.flags.mean == 0.6 and result.consistency_rate == 1.0
    assert re.search(r"mean \+0\.6000", result.flags.reason)
    n = len(result.cells)  # every pair +3/5: n wins for run B
    assert result.trinomial == conservative_trinomial_test(n, 0, 0)
    shown = result.to_dict()
    assert (shown["trinomial"]["wins"], shown["trinomial"]["p_value"]) == (
        n,
        result.trinomial.p_value,
    )
    assert (shown["score_alert"], shown["reason"]) == (result.flags.alert, result.reason)
    assert shown["reason"].startswith(result.flags.reason)


def test_clean_pitfalls_review_with_stated_zero_burden_uses_the_mapping() -> None:
    """A Pitfalls review listing no pitfalls but stating `BurdenTotal: 0` (the clean-run answer
    the rubric asks for) has burden 0, so the SxS score is still the §6 mapping, not the LLM's."""
    trajs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    a = [t for t in trajs if t.model == "gpt-4.1"][:1]
    b = [t for t in trajs if t.model == "sonnet-4.5"][:1]
    clean = "<Review>No pitfalls.\nBurdenTotal: 0</Review><Score>1</Score>"
    looping = (
        "<Review>Loops.\nPitfall: loop | Category: Tool/Harness | Severity: high | "
        "Frequency: repeated | Evidence: S2\nBurdenTotal: 14</Review><Score>0</Score>"
    )
    paired = pair_runs(
        a, b, [review(a[0], {"Pitfalls": clean})], [review(b[0], {"Pitfalls": looping})]
    )
    provider = Fixed("<PairwiseScore>2</PairwiseScore>")
    result = asyncio.run(
        run_sxs(LLMClient(provider, cache=None), paired.a, paired.b, dimensions=["Pitfalls"])
    )["Pitfalls"]
    # Total_1 = 0, Total_2 = 7 × 2 = 14, Delta = 14 → magnitude 3 (11–15), Agent 1 better: −3
    (cell,) = result.cells
    assert cell.pitfalls is not None
    assert cell.pitfalls.line == "Totals: A1=0, A2=14, Delta=14 => Score=-3"
    assert (cell.forward, cell.swapped) == (-3, -3)


class AlertJudge(Fixed):
    """Comparisons as `Fixed`; the summary prompt of the released judge alert gets `alert`."""

    def __init__(self, text: str, alert: str) -> None:
        super().__init__(text)
        self.alert = alert

    async def chat(self, request: ChatRequest) -> ChatResponse:
        if "alert flag is" in request.messages[-1]["content"]:
            self.prompts.append(request.messages[-1]["content"])
            return ChatResponse(text=self.alert)
        return await super().chat(request)


def test_released_profile_asks_the_llm_for_the_judge_alert(sides) -> None:
    """Spec §8.4: the released judge alert is an LLM summary of all C<k>; the default applies
    the rule to the comparison lines (here: A1 wins 'tools' at high severity in every task)."""
    a, b = sides
    comparison = (
        "<Comparison>Same.\nAspect: tools | Winner: A1 | Severity: high | Evidence: A1 S1"
        "</Comparison><PairwiseScore>-3</PairwiseScore>"
    )
    run = {"dimensions": ["ToolCalls"], "swap": False}
    default = asyncio.run(run_sxs(LLMClient(Fixed(comparison), cache=None), a, b, **run))
    assert default["ToolCalls"].judge_alert  # ≥ 3 tasks, one high
    judge = AlertJudge(comparison, "<Comparison>x</Comparison><AlertFlag>false</AlertFlag>")
    released = asyncio.run(
        run_sxs(
            LLMClient(judge, cache=None),
            a,
            b,
            ties="released",
            llm_alert=True,
            trinomial_profile="released",
            **run,
        )
    )["ToolCalls"]
    n = len(released.cells)  # every pair −3: n wins for run A
    assert released.trinomial == conservative_trinomial_test(0, 0, n, profile="released")
    assert not released.judge_alert and "AlertFlag false" in released.judge_alert_reason
    (prompt,) = judge.prompts[-1:]
    n = len(released.cells)
    assert f"Comparison: C{n} (" in prompt and "Score given: -3" in prompt
    silent = AlertJudge(comparison, "no flag")
    result = asyncio.run(run_sxs(LLMClient(silent, cache=None), a, b, llm_alert=True, **run))
    assert not result["ToolCalls"].judge_alert
    assert "no <AlertFlag>" in result["ToolCalls"].judge_alert_reason


def test_released_presence_shows_unscored_review_text(sides) -> None:
    """Released code: a review is present when it has text, scored or not; the default shows an
    unscored review (run B's ToolCalls answer has no <Score>) as Unknown on both sides."""
    a, b = sides
    provider = Fixed("<PairwiseScore>0</PairwiseScore>")
    run = {"dimensions": ["ToolCalls"], "swap": False}
    asyncio.run(run_sxs(LLMClient(provider, cache=None), a, b, presence="text", **run))
    assert all("no score here\nScore: unscored" in p for p in provider.prompts)
    assert not any("Unknown" in p for p in provider.prompts)
    assert any("fine\nScore: 1.0" in p for p in provider.prompts)


def test_sxs_command_shows_the_trinomial_test_beside_the_permutation_p(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pitfalls scores come from the burden mapping, so any judge gives +3 for each of the three
    gpt-4.1 / sonnet-4.5 pairs: W/T/L 3/0/0 for run B, in the table, the JSON and the file."""
    task = BENCH / "trajectories" / "psf__requests-1724"
    runs = [str(task / "*-logs-gpt-4.1-*"), str(task / "*-logs-sonnet-4.5-*")]
    for name, run, answer in (("a", runs[0], PIT_A), ("b", runs[1], PIT_B)):
        trajs = read_paths([run]).trajectories
        reviews = [review(t, {"Pitfalls": answer}) for t in trajs]
        dump(reviews_document("judge", reviews), tmp_path / f"{name}.json")
    args = ["sxs", *runs, "--reviews-a", str(tmp_path / "a.json")]
    args += ["--reviews-b", str(tmp_path / "b.json"), "--dimension", "Pitfalls", "--no-cache"]
    with FaultServer() as server:
        args += ["--judge", server.model()]
        capsys.readouterr()
        assert main([*args, "--out", str(tmp_path / "sxs.json")]) == 0
        table = capsys.readouterr()
        assert main([*args, "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
    expected = conservative_trinomial_test(3, 0, 0)
    assert "W/T/L" in table.out and "3/0/0" in table.out
    assert "…" not in table.out  # at 80 columns (the console's width here) nothing is cut short
    assert f"{expected.p_value:.3f}" in table.out
    assert "reported only: the flags use the permutation p" in " ".join(table.err.split())
    # the title names the runs as the legend does ("negative mean = run A better"), not A1 / A2,
    # which the judge gives to whichever run it reads first
    title = " ".join(table.out.split("┏")[0].split())
    assert "-logs-gpt-4.1-* (A) vs" in title and "-logs-sonnet-4.5-* (B)" in title, title
    shown = doc["dimensions"]["Pitfalls"]
    assert shown["trinomial"] == expected.to_dict()
    assert json.loads((tmp_path / "sxs.json").read_text())["dimensions"]["Pitfalls"] == shown


def sxs_with_failed_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, pytest.CaptureResult[str], Path, Path]:
    """`sxs` of gpt-4.1 (one file truncated) vs sonnet-4.5 on ToolCalls, every judge call
    answered HTTP 400 (not retried): (exit code, output, the truncated file, the --out JSON)."""
    task = BENCH / "trajectories" / "psf__requests-1724"
    run_a = tmp_path / "a"
    run_a.mkdir()
    first, *rest = sorted(task.glob("*-logs-gpt-4.1-*"))
    for path in rest:
        (run_a / path.name).write_bytes(path.read_bytes())
    (run_a / first.name).write_bytes(first.read_bytes()[:30_000])
    runs = [str(run_a), str(task / "*-logs-sonnet-4.5-*")]
    fine = "<Review>fine</Review><Score>1</Score>"
    for name, run in zip("ab", runs, strict=True):
        trajs = read_paths([run]).trajectories
        dump(reviews_document("judge", [review(t, {"ToolCalls": fine}) for t in trajs]),
             tmp_path / f"{name}.json")  # fmt: skip
    args = ["sxs", *runs, "--reviews-a", str(tmp_path / "a.json"), "--reviews-b"]
    args += [str(tmp_path / "b.json"), "--dimension", "ToolCalls", "--no-cache"]
    args += ["--out", str(tmp_path / "sxs.json")]
    with FaultServer() as server:
        server.queue(*["400"] * 20)
        capsys.readouterr()
        code = main([*args, "--judge", server.model()])
    return code, capsys.readouterr(), run_a / first.name, tmp_path / "sxs.json"


def test_sxs_names_a_bad_file_and_failed_calls_and_exits_on_nothing_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A truncated trace of run A gets its one line, judge calls that failed get theirs, and a
    dimension with no scored comparison is n/a with exit 4, never an "ok" row with mean +0.000
    and exit 0."""
    code, shown, truncated, _ = sxs_with_failed_calls(tmp_path, capsys)
    err = " ".join(shown.err.split())
    assert code == 4
    assert f"failed: {truncated} [agentlens-bench]: invalid JSON" in err
    assert "failed: 4 of 4 judge calls; first: provider error:" in err
    assert "unscored: no scored comparison for ToolCalls: its mean is n/a (exit 4)" in err
    assert "+0.000" not in shown.out and "n/a" in shown.out


def test_a_dimension_with_nothing_scored_has_no_mean_in_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its JSON said mean_score 0.0 and p_value 1.0 beside scored_tasks 0: a script reading the
    mean saw "no change" where the judge said nothing."""
    *_, sxs_path = sxs_with_failed_calls(tmp_path, capsys)
    shown = json.loads(sxs_path.read_bytes())["dimensions"]["ToolCalls"]
    assert (shown["scored_tasks"], shown["mean_score"], shown["p_value"]) == (0, None, None)


def test_a_pitfall_of_unknown_severity_leaves_the_burden_to_the_stated_total() -> None:
    """ "Severity: severe" has no points: the lines' sum read 0 and overrode the judge's stated
    BurdenTotal 17, so the SxS Pitfalls score was computed from 0."""
    text = (
        "<Review>\nPitfall: loop | Category: Tool/Harness | Severity: severe | Frequency: once"
        " | Evidence: S1\nPitfall: typo | Category: Logic/Code | Severity: med | Frequency: "
        "once | Evidence: S2\nBurdenTotal: 17</Review><Score>0</Score>"
    )
    parsed = parse_review(text, 3)
    assert (parsed.burden_total, parsed.stated_burden_total) == (None, 17)
    rated = text.replace("severe", "high").replace("med |", "medium |")
    assert parse_review(rated, 3).burden_total == 7 + 3


def test_compare_warns_on_an_sxs_dimension_with_nothing_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The regression gate does not read "mean 0, p 1: ok" into a judge that said nothing."""
    *_, sxs_path = sxs_with_failed_calls(tmp_path, capsys)
    task = str(BENCH / "trajectories" / "psf__requests-1724" / "*-logs-gpt-4.1-*")
    code = main(["compare", task, task, "--sxs", str(sxs_path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    (row,) = [c for c in doc["checks"] if c["name"] == "SxS: ToolCalls"]
    assert (code, doc["status"]) == (1, "warning")
    assert row["v2"] is None and row["warning"] and not row["alert"]
    assert row["reason"].startswith("no scored comparison (0 of 2 tasks): the mean is n/a")


def test_selfpref_with_no_cell_scored_by_both_judges_is_na(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two SxS files with nothing scored in common give no self-preference rate, not 0.0%."""
    *_, sxs_path = sxs_with_failed_calls(tmp_path, capsys)
    code = main(["selfpref", str(sxs_path), str(sxs_path)])
    shown = capsys.readouterr()
    assert code == 4
    assert "0.0%" not in shown.out and "0 cells: rates n/a" in " ".join(shown.out.split())
    assert main(["selfpref", str(sxs_path), str(sxs_path), "--json"]) == 4
    assert json.loads(capsys.readouterr().out)["self_favouring_rate"] is None


def test_compare_says_why_the_qi_delta_is_na(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--a-reviews`/`--b-reviews` are "for the QI delta": without verify files the formal rate,
    and so the QI, is n/a, and the row says so instead of vanishing."""
    task = BENCH / "trajectories" / "psf__requests-1724"
    runs = [str(task / "*-logs-gpt-4.1-*"), str(task / "*-logs-sonnet-4.5-*")]
    fine = "<Review>fine</Review><Score>1</Score>"
    for name, run in zip("ab", runs, strict=True):
        trajs = read_paths([run]).trajectories
        reviews = [review(t, dict.fromkeys(DIMENSIONS, fine)) for t in trajs]
        dump(reviews_document("judge", reviews), tmp_path / f"{name}.json")
    args = ["compare", *runs, "--a-reviews", str(tmp_path / "a.json")]
    code = main([*args, "--b-reviews", str(tmp_path / "b.json"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    (row,) = [c for c in doc["checks"] if c["name"] == "quality index"]
    assert code == doc["exit_code"] and not row["warning"] and row["v1"] is None
    assert row["reason"] == (
        "QI n/a: both runs: no scored item for Formal "
        "(the formal pass rate comes from --a-verify / --b-verify)"
    )  # said once: both runs' reasons, in full, made the longest cell of the table


def test_the_reason_shows_how_the_judge_alert_makes_the_final_flags() -> None:
    """The Pitfalls row of a real SxS (SmolLM2 judging gpt-4o against deepseek-coder-v2 on the
    five SWE-bench-java tasks: scores 2, 4, 2, −2, 2 of 5): mean +0.32 is past the score warning
    line, yet the flag is ok, because spec §8 takes warning = score alert or judge alert. The
    reason said only "warning iff mean ≤ −0.2 or ≥ 0.3", so the row contradicted itself."""
    result = DimensionResult("Pitfalls", [], score_flags([0.4, 0.8, 0.4, -0.4, 0.4]), False)
    shown = result.to_dict()
    assert (shown["score_warning"], shown["warning"], shown["alert"]) == (True, False, False)
    assert shown["reason"] == (
        "mean +0.3200, p = 0.333: warning iff mean ≤ −0.2 or ≥ 0.3; alert iff p < 0.05 or mean "
        "≤ −0.4 or ≥ 0.5; so score warning yes, score alert no, judge alert no → warning = score "
        "alert or judge alert = no, alert = score alert and judge alert = no (spec §8)"
    )
    row = sxs_check("Pitfalls", {**shown, "scored_tasks": 5})  # the real run's five cells
    assert row.detail.startswith(shown["reason"]) and not (row.warning or row.alert)
    assert "score warning yes, score alert no, judge alert no" in row.reason


def test_the_compare_markdown_keeps_the_sxs_arithmetic_out_of_its_cell() -> None:
    """The SxS row's reason was the whole flag rule and trinomial arithmetic (~650 characters)
    in one Markdown table cell. The cell now says mean, p and the verdict; the arithmetic is a
    numbered note below the table, whole."""
    scores = [0.4, 0.8, 0.4, -0.4, 0.4]
    flags = score_flags(scores)
    dimension = {
        **DimensionResult("Pitfalls", [], flags, False).to_dict(),
        "trinomial": trinomial_from_scores(scores).to_dict(),
        "scored_tasks": 5,
        "mean_score": flags.mean,
        "p_value": flags.p_value,
    }
    run_b = RunSummary("b", RunTelemetry.of([]), sxs_flags={"Pitfalls": dimension})
    doc = compare_runs(RunSummary("a", RunTelemetry.of([])), run_b).to_dict()
    markdown = compare_markdown(doc)
    (row,) = [line for line in markdown.splitlines() if line.startswith("| SxS: Pitfalls")]
    cell = row.split(" | ")[-1]
    assert len(cell) < 160 and cell.endswith("[1] |")
    assert "mean +0.3200, p = 0.333: score warning yes" in cell
    note = markdown.split("\n1. **SxS: Pitfalls**: ", 1)[1]
    assert "T_obs =" in note and "(spec §8)" in note


REPEATED_ASPECT = (
    "<Comparison>Agent 1 recovered from its tool errors.\n"
    "Aspect: tool errors | Winner: A1 | Severity: high | Evidence: A2 S3\n"
    "Aspect: tool errors | Winner: A1 | Severity: low | Evidence: A2 S4\n"
    "Aspect: tool errors | Winner: A1 | Severity: low | Evidence: A2 S5\n"
    "</Comparison><PairwiseScore>-2</PairwiseScore>"
)


def test_the_judge_alert_counts_comparisons_not_lines() -> None:
    """Spec §8.4: the alert needs the same winner "in at least 3 comparisons". One comparison
    that names one aspect on three lines is one comparison, not three; three do alert."""
    parsed = parse_comparison(REPEATED_ASPECT)

    def cell(task: str) -> Cell:
        return Cell(task, "ToolCalls", -2, None, comparisons=[parsed])

    assert not judge_alert([cell("t1")])
    assert not judge_alert([cell("t1"), cell("t2")])
    assert judge_alert([cell("t1"), cell("t2"), cell("t3")])
