"""The `testing` metric set (spec §5.6): its four rubrics (AgentLens's own) reach the judge's
prompt, scripted answers go through aggregation, the reviews document and its Markdown, the QI
keeps its six components while the testing means are reported beside it, SxS scores the testing
dimensions from the judge's pairwise score, and `--metric-set` reaches the judge over HTTP."""

from __future__ import annotations

import asyncio
import json
import re
from importlib import resources
from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.formats.load import read_path
from agentlens.jsonio import dump
from agentlens.providers import LLMClient
from agentlens.reviews import ALL_DIMENSIONS, DIMENSIONS, METRIC_SETS, TESTING_DIMENSIONS
from agentlens.reviews.documents import load_reviews, reviewed_dimensions, reviews_document
from agentlens.reviews.judge.compact import compact
from agentlens.reviews.judge.judge import aggregate, review_run
from agentlens.reviews.judge.prompt import ReviewContext, build_messages, rubric
from agentlens.reviews.judge.summary import summarize
from agentlens.reviews.markdown import reviews_markdown
from agentlens.reviews.qi import quality_index
from agentlens.reviews.sxs.judge_pairs import run_sxs
from agentlens.reviews.sxs.pairing import Side, task_key
from tests.conftest import BENCH
from tests.providers.fault_server import FaultServer
from tests.reviews.test_judge import ANSWER, ScriptedProvider
from tests.reviews.test_sxs_run import Fixed

TASK = BENCH / "trajectories" / "psf__requests-1724"
# Writes a test script, runs it before and after the fix, runs the suite, then deletes the script.
WRITES_A_TEST = TASK / "psf__requests-1724-logs-opus-4.5-pass-25090524692_pta.json"
OTHER_RUN = TASK / "psf__requests-1724-logs-gemini-2.5-pro-pass-24943628310_pta.json"
# One check per rubric that the brief for a strong reviewer of agent-written tests asks for.
CHECKS = {
    "RelianceOnMocking": "assert_called_with",
    "TestMaintainability": "sleeps",
    "TestSemanticCoverage": "failure paths",
    "TestUsefulness": "tautological asserts",
}


@pytest.fixture(scope="module")
def traj():
    return read_path(WRITES_A_TEST)[0]


def test_the_testing_set_is_the_five_plus_four() -> None:
    assert METRIC_SETS["workflows"] == DIMENSIONS
    assert METRIC_SETS["testing"] == (*DIMENSIONS, *TESTING_DIMENSIONS) == ALL_DIMENSIONS
    assert set(CHECKS) == set(TESTING_DIMENSIONS)


@pytest.mark.parametrize("dim", TESTING_DIMENSIONS)
def test_testing_rubric_reaches_the_prompt_without_its_provenance_note(traj, dim: str) -> None:
    raw = resources.files("agentlens.reviews.judge").joinpath("rubrics", f"{dim}.md").read_text()
    assert raw.startswith("<!-- AgentLens's own outline: arXiv 2607.06624 names this")
    ctx = ReviewContext(final_diff="--- a/requests/models.py\n+++ b/requests/models.py\n")
    user = build_messages(traj, dim, compact(traj, 1500), ctx)[1]["content"]
    body = rubric(dim)
    assert body in user and CHECKS[dim] in body
    assert "<!--" not in user and "own outline" not in user
    assert f"performance dimension '{dim}' only" in user
    scoring = re.search(r"<Scoring>\n0 = .+\n0\.5 = .+\n1 = .+\n</Scoring>", body)
    assert scoring is not None, body
    assert "no new or changed tests" in body  # nothing to judge is a 0, said so, not a guess
    assert "<Score>0 or 0.5 or 1</Score>" in user and "Evidence: <step ids" in user
    assert "<Focus>" not in user


def test_workflows_rubrics_reach_the_prompt_unchanged() -> None:
    for dim in DIMENSIONS:
        raw = resources.files("agentlens.reviews.judge").joinpath("rubrics", f"{dim}.md")
        assert rubric(dim) == raw.read_text()  # same prompts, so cached answers stay valid


def scripted() -> ScriptedProvider:
    def answer(score: str, aspect: str, step: int) -> str:
        line = f"Aspect: {aspect} | Severity: medium | Evidence: S{step}"
        return f"<Review>Looked at the tests.\n{line}</Review><Score>{score}</Score>"

    return ScriptedProvider(
        {
            "EndResult": answer("1", "fix in place", 11),
            "Pitfalls": ANSWER,
            "RelianceOnMocking": answer("1", "real PreparedRequest, no mocks", 8),
            "TestMaintainability": answer("0.5", "script deleted, not kept as a test", 17),
            "TestSemanticCoverage": answer("0", "only the unicode method path", 9),
            "TestUsefulness": "I can't judge tests that were deleted.",
        }
    )


@pytest.fixture(scope="module")
def testing_reviews():
    trajs = [read_path(WRITES_A_TEST)[0], read_path(OTHER_RUN)[0]]
    provider = scripted()
    reviews = asyncio.run(
        review_run(LLMClient(provider, cache=None), trajs, dimensions=METRIC_SETS["testing"])
    )
    return provider, reviews


def test_scripted_testing_answers_through_aggregation_and_report(
    testing_reviews, tmp_path: Path
) -> None:
    provider, reviews = testing_reviews
    asked = [re.search(r"dimension '(\w+)'", p)[1] for p in provider.prompts]  # type: ignore[index]
    assert sorted(asked) == sorted(ALL_DIMENSIONS * 2)
    summary = aggregate(reviews, ALL_DIMENSIONS)
    assert {d: summary[d].mean for d in TESTING_DIMENSIONS} == {
        "RelianceOnMocking": 1.0,
        "TestMaintainability": 0.5,
        "TestSemanticCoverage": 0.0,
        "TestUsefulness": None,
    }
    assert summary["TestUsefulness"].unscored_rate == 1.0  # a refusal is unscored, never 0
    doc = reviews_document("scripted", reviews)
    assert list(doc["summary"]) == list(ALL_DIMENSIONS)
    path = tmp_path / "reviews.json"
    dump(doc, path)
    again = load_reviews(path)
    assert list(again[0].reviews) == list(ALL_DIMENSIONS)
    assert again[0].reviews["TestMaintainability"].parsed.evidence[0].step_ids == [17]
    md = reviews_markdown(json.loads(path.read_text()))
    assert "| TestSemanticCoverage | 0.00 | 2 | 0% |" in md
    assert "| TestUsefulness | – | 0 | 100% |" in md
    assert (
        "RelianceOnMocking, TestMaintainability, TestSemanticCoverage, TestUsefulness: "
        "the testing set, reported beside the QI, not in it." in md
    )
    assert "[S17](#t0-S17)" in md and '<a id="t0-S17"></a>S17: ' in md


def test_summary_step_covers_the_testing_dimensions(testing_reviews) -> None:
    _, reviews = testing_reviews
    assert reviewed_dimensions(reviews) == list(ALL_DIMENSIONS)  # what `review --summary` runs
    judge = Fixed(
        "<Summary>\nAspect group: scratch tests | Reviews: R1, R2 | Deleted, not kept.\n"
        "Both runs (R1, R2) removed their test scripts.\n</Summary>"
    )
    narrative = asyncio.run(summarize(LLMClient(judge, cache=None), "TestMaintainability", reviews))
    assert narrative.citations == {1: reviews[0].trajectory_id, 2: reviews[1].trajectory_id}
    (prompt,) = judge.prompts
    assert "on the dimension 'TestMaintainability'" in prompt
    assert "script deleted, not kept as a test" in prompt and "<R2>" in prompt


def test_qi_keeps_its_six_components_when_the_testing_set_is_reviewed(
    testing_reviews, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, reviews = testing_reviews
    means = {d: s.mean for d, s in aggregate(reviews, ALL_DIMENSIONS).items()}
    workflows_only = {d: means[d] for d in DIMENSIONS}
    assert quality_index(0.5, means).to_dict() == quality_index(0.5, workflows_only).to_dict()
    path = tmp_path / "reviews.json"
    dump(reviews_document("scripted", reviews), path)
    capsys.readouterr()
    # n/a, exit 4: the scripted judge leaves three of the five QI dimensions unscored
    code = 4
    assert main(["qi", "--reviews", str(path), "--formal", "0.5", "--json"]) == code
    doc = json.loads(capsys.readouterr().out)
    assert doc["components"] == {
        "Formal": 0.5, "EndResult": 1.0, "InstructionCompliance": None, "Pitfalls": 0.5,
        "Pleasantness": None, "ToolCalls": None,
    }  # fmt: skip
    assert doc["quality_index"] is None and doc["warnings"] == []
    assert doc["reason"] == "n/a: no scored item for InstructionCompliance, Pleasantness, ToolCalls"
    assert doc["beside_qi"] == {d: means[d] for d in TESTING_DIMENSIONS}
    assert main(["qi", "--reviews", str(path), "--formal", "0.5"]) == code
    text = capsys.readouterr().out
    beside = text[text.index("beside the QI (not in it):") :]
    assert "TestUsefulness" in beside and "unscored 100%" in beside and "EndResult" not in beside


def test_sxs_scores_testing_dimensions_from_the_pairwise_score(testing_reviews) -> None:
    _, reviews = testing_reviews
    trajs = [read_path(WRITES_A_TEST)[0], read_path(OTHER_RUN)[0]]
    by_id = {r.trajectory_id: r for r in reviews}
    sides = [Side({task_key(t): t}, {task_key(t): by_id[t.id]}) for t in trajs]
    judge = Fixed("<Comparison>x</Comparison><PairwiseScore>-3</PairwiseScore>")
    result = asyncio.run(
        run_sxs(LLMClient(judge, cache=None), *sides, dimensions=METRIC_SETS["testing"])
    )
    assert list(result) == list(ALL_DIMENSIONS)
    for dim in TESTING_DIMENSIONS:
        (cell,) = result[dim].cells
        assert (cell.forward, cell.swapped, cell.pitfalls) == (-3, 3, None)
    assert result["Pitfalls"].cells[0].pitfalls is not None  # the burden mapping, as before
    asked = {re.search(r"dimension '(\w+)'", p)[1] for p in judge.prompts}  # type: ignore[index]
    assert asked == set(ALL_DIMENSIONS)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def asked_dimensions(server: FaultServer) -> list[str]:
    found = (re.search(r"dimension '(\w+)'", c) for c in server.contents())
    return sorted(m[1] for m in found if m)


def test_metric_set_option_reaches_review_and_sxs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Over real HTTP to a local OpenAI-compatible server that echoes each prompt (so every
    answer is unscored): the option picks which dimensions are asked."""
    with FaultServer() as server:
        judge = ["--judge", server.model(), "--no-cache"]
        outs = []
        for name, path in (("a", WRITES_A_TEST), ("b", OTHER_RUN)):
            out = tmp_path / f"{name}.json"
            code, _, _ = run_cli(
                capsys, "review", str(path), *judge, "--metric-set", "testing", "--out", str(out)
            )
            assert code == 4  # every answer unscored: no dimension has a scored item
            assert list(json.loads(out.read_text())["summary"]) == list(ALL_DIMENSIONS)
            outs.append(str(out))
        assert asked_dimensions(server) == sorted(ALL_DIMENSIONS * 2 * 2)  # asked, re-asked
        server.requests.clear()
        code, out, _ = run_cli(
            capsys, "sxs", str(WRITES_A_TEST), str(OTHER_RUN), "--reviews-a", outs[0],
            "--reviews-b", outs[1], *judge, "--metric-set", "testing", "--no-swap", "--json",
        )  # fmt: skip
        assert code == 4 and list(json.loads(out)["dimensions"]) == list(ALL_DIMENSIONS)
        assert asked_dimensions(server) == sorted(ALL_DIMENSIONS * 2)  # asked, re-asked
        server.requests.clear()
        code, out, _ = run_cli(
            capsys, "review", str(WRITES_A_TEST), *judge, "--json",
            "--metric-set", "testing", "--dimension", "TestUsefulness", "--dimension", "EndResult",
        )  # fmt: skip
        assert code == 4 and asked_dimensions(server) == sorted(["EndResult", "TestUsefulness"] * 2)
        server.requests.clear()
        code, out, _ = run_cli(capsys, "review", str(WRITES_A_TEST), *judge, "--json")
        # default auto: an untagged trajectory is judged on workflows
        assert code == 4 and asked_dimensions(server) == sorted(DIMENSIONS * 2)


@pytest.mark.parametrize("command", ["review", "sxs"])
def test_a_testing_dimension_needs_the_testing_set(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reviews = tmp_path / "r.json"
    reviews.write_text("{}")
    args = {
        "review": ["review", str(WRITES_A_TEST)],
        "sxs": ["sxs", "a", "b", "--reviews-a", str(reviews), "--reviews-b", str(reviews)],
    }[command]
    code, _, err = run_cli(
        capsys, *args, "--judge", "unused", "--metric-set", "workflows",
        "--dimension", "TestUsefulness",
    )  # fmt: skip
    assert code == 2
    assert "TestUsefulness is not in the workflows metric set (add --metric-set testing)" in err
