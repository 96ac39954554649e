"""Judge and SxS against the real local model (SmolLM2-135M on llama.cpp). Its answers are often
unparseable; the tests assert on the pipeline: prompts, token usage, parsing, aggregation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentlens.formats.load import read_path
from agentlens.formats.stream import read_paths
from agentlens.providers import ProvidersConfig, RetryPolicy, get_provider
from agentlens.reviews import TESTING_DIMENSIONS
from agentlens.reviews.documents import reviews_document
from agentlens.reviews.judge.judge import JudgeSettings, aggregate, review_trajectory
from agentlens.reviews.qi import COMPONENTS, quality_index
from agentlens.reviews.sxs.judge_pairs import run_sxs
from agentlens.reviews.sxs.pairing import Side, task_key
from tests.conftest import BENCH

pytestmark = pytest.mark.llm
DIMS = ["ToolCalls"]  # few calls: each takes seconds (minutes on a loaded 2-core box)


@pytest.fixture(scope="module")
def client(local_llm_url: str):
    # One request at a time with a long timeout: the server is serial and CI machines are slow.
    return get_provider(
        local_llm_url,
        role="judge",
        cache=False,
        max_concurrency=1,
        config=ProvidersConfig(timeout_s=600),
        retry=RetryPolicy(timeout_s=600, max_attempts=1),
    )


@pytest.fixture(scope="module")
def pair():
    trajs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    passing = sorted(
        (t for t in trajs if t.outcome.status == "passed"), key=lambda t: (len(t.steps), t.id)
    )
    return passing[0], passing[1]


@pytest.fixture(scope="module")
def reviews(client, pair):
    # no log-probs (a third of the time on this server): the new CLI test below asks for them
    settings = JudgeSettings(budget_tokens=500, max_tokens=96, top_logprobs=0)
    return [
        asyncio.run(review_trajectory(client, t, dimensions=DIMS, settings=settings)) for t in pair
    ]


def test_review_pipeline_with_local_model(reviews, pair) -> None:
    for traj, review in zip(pair, reviews, strict=True):
        assert set(review.reviews) == set(DIMS)
        for r in review.reviews.values():
            assert r.usage["prompt_tokens"] > 0, r.unscored_reason  # the server answered
            assert 0.6 < r.prompt_tokens_estimate / r.usage["prompt_tokens"] < 1.5
            if r.scored:
                assert r.score in (0.0, 0.5, 1.0)
                assert all(i < len(traj.steps) for e in r.parsed.evidence for i in e.step_ids)
            else:
                assert r.unscored_reason
    summary = aggregate(reviews, DIMS)
    for dim in DIMS:
        scores = [r.reviews[dim].score for r in reviews]
        assert summary[dim].unscored == sum(s is None for s in scores)
        kept = [s for s in scores if s is not None]
        assert summary[dim].mean == (round(sum(kept) / len(kept), 2) if kept else None)


def test_testing_set_with_local_model(client) -> None:
    """The four dimensions the `testing` set adds, on a real run that wrote and ran a test script
    (the five are the other tests' business; each call costs seconds): every call is answered
    within the 4k context, the document lists them, and they stay out of the QI."""
    from tests.reviews.test_testing_metrics import WRITES_A_TEST

    traj = read_path(WRITES_A_TEST)[0]
    # no log-probs: llama-cpp-python's server computes them over every prompt token (61 -> 22 s)
    settings = JudgeSettings(budget_tokens=500, max_tokens=48, top_logprobs=0)
    review = asyncio.run(
        review_trajectory(client, traj, dimensions=TESTING_DIMENSIONS, settings=settings)
    )
    assert list(review.reviews) == list(TESTING_DIMENSIONS)
    for r in review.reviews.values():
        assert r.usage["prompt_tokens"] > 0, r.unscored_reason  # the server answered
        assert r.distribution is None  # none asked for
        assert r.score in (0.0, 0.5, 1.0) if r.scored else r.unscored_reason
    doc = reviews_document(client.name, [review])
    means = {d: s["mean"] for d, s in doc["summary"].items()}
    assert list(means) == list(TESTING_DIMENSIONS)
    qi = quality_index(1.0, means)
    # the testing dimensions stay out of the QI: its five judge components have no item, so n/a
    assert tuple(qi.components) == COMPONENTS and qi.value is None
    assert qi.na_reason == (
        "no scored item for EndResult, InstructionCompliance, Pitfalls, Pleasantness, ToolCalls"
    )


@pytest.fixture(scope="module")
def sxs_result(client, reviews, pair):
    a = Side({task_key(pair[0]): pair[0]}, {task_key(pair[0]): reviews[0]})
    b = Side({task_key(pair[1]): pair[1]}, {task_key(pair[1]): reviews[1]})
    return asyncio.run(
        run_sxs(client, a, b, dimensions=["ToolCalls"], budget_tokens=800, max_tokens=64)
    )


def test_sxs_with_local_model(sxs_result) -> None:
    result = sxs_result
    cell = result["ToolCalls"].cells[0]
    assert len(cell.comparisons) == 2  # forward and swapped were both asked
    for parsed, raw in zip(cell.comparisons, (cell.forward, cell.swapped), strict=True):
        assert (parsed.score is None) == (parsed.unscored_reason is not None)
        if raw is not None:
            assert -5 <= raw <= 5
    rate = result["ToolCalls"].consistency_rate
    assert rate is None or rate in (0.0, 1.0)


def test_sxs_gets_a_verdict_from_every_call_of_the_default_local_judge(
    local_gguf_path, client, reviews, pair, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agentlens sxs` on two real runs of one task with SmolLM2 in process (llama.cpp, the
    default local judge): the pairwise answer is asked in a schema (a GBNF grammar), so every
    (pair, dimension, order) call gives a usable verdict and the mean is a number. In the tagged
    format this model wrote no usable <PairwiseScore> (0 of 2 here, exit 4)."""
    from agentlens.cli import main
    from agentlens.jsonio import dump

    files = []
    for side, review in zip("ab", reviews, strict=True):
        files.append(tmp_path / f"reviews-{side}.json")
        dump(reviews_document(client.name, [review]), files[-1])
    out = tmp_path / "sxs.json"
    runs = [t.source.path for t in pair]
    code = main(
        ["sxs", *runs, "--reviews-a", str(files[0]), "--reviews-b", str(files[1]),
         "--judge", f"llamacpp:{local_gguf_path}", "--metric-set", "workflows",
         "--dimension", "ToolCalls", "--budget-tokens", "800", "--no-cache", "--out", str(out)]
    )  # fmt: skip
    doc = json.loads(out.read_text())
    (cell,) = doc["dimensions"]["ToolCalls"]["cells"]
    verdicts = [c["score"] for c in cell["comparisons"]]
    assert len(verdicts) == 2 and all(v is not None and -5 <= v <= 5 for v in verdicts), cell
    assert code == 0, capsys.readouterr().err
    assert (doc["answers"], doc["temperature"]) == ("schema", 0.0)
    assert cell["forward"] == verdicts[0] and cell["swapped"] == -verdicts[1]
    assert doc["dimensions"]["ToolCalls"]["mean_score"] == round(
        (verdicts[0] - verdicts[1]) / 2 / 5, 4
    )


def test_summary_with_local_model(client, reviews) -> None:
    """Spec §5.5 through the real model: whatever it answers, citations are only ever mapped to
    reviews that exist, and an answer without a <Summary> is reported, not invented."""
    from agentlens.reviews.judge.summary import summarize, summarized_reviews

    n = len(summarized_reviews(reviews, "ToolCalls"))
    narrative = asyncio.run(summarize(client, "ToolCalls", reviews, max_tokens=96))
    if narrative.text is None:
        assert narrative.unscored_reason
    else:
        assert all(1 <= k <= n for k in narrative.citations)
        assert all(k > n or k < 1 for k in narrative.unknown_citations)
        assert all(set(g.reviews) <= set(narrative.citations) for g in narrative.groups)


def test_released_judge_alert_with_local_model(client, sxs_result) -> None:
    """The released profile's LLM judge alert through the real model: a real comparison of the
    pair goes in, a flag (or "no alert" with the reason) comes out."""
    from agentlens.reviews.sxs.alert import llm_judge_alert

    cell = sxs_result["ToolCalls"].cells[0]
    alert = asyncio.run(
        llm_judge_alert(client, "ToolCalls", [cell.task], cell.comparisons[:1], max_tokens=48)
    )
    assert isinstance(alert.alert, bool) and alert.reason.startswith("LLM judge alert:")


def test_review_whose_prompts_overflow_the_context_exits_4_with_one_line(
    local_gguf_path, capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch
) -> None:
    """The default 6000-token transcript budget does not fit a context configured to 4k: each
    call is a provider error, said once; the dimension has no scored item, so exit 4."""
    from agentlens.cli import main

    config = tmp_path / "agentlens.yaml"
    config.write_text("llm:\n  backends:\n    llamacpp:\n      n_ctx: 4096\n")
    monkeypatch.setenv("AGENTLENS_CONFIG", str(config))
    runs = (BENCH / "trajectories" / "psf__requests-1724").glob("*.json")
    longest = max(runs, key=lambda p: (p.stat().st_size, p.name))
    code = main(
        [
            "review",
            str(longest),
            "--judge",
            f"llamacpp:{local_gguf_path}",
            "--dimension",
            "ToolCalls",
            "--no-cache",
        ]
    )
    err = capsys.readouterr().err
    assert code == 4
    (line,) = [x for x in err.splitlines() if x.startswith("failed:")]
    assert line.startswith("failed: 1 of 1 judge calls; first: provider error: llamacpp:")
    assert "the model's context 4096" in line


def test_review_without_the_score_distribution_asks_for_no_log_probs(
    local_llm_url: str, tmp_path: Path
) -> None:
    """`review --no-score-distribution` against llama-cpp-python's server: the same answer, no
    distribution (the default reads one from the log-probs it asks for)."""
    from agentlens.cli import main

    trace = next(iter(sorted((BENCH / "trajectories" / "psf__requests-1724").glob("*.json"))))
    args = ["review", str(trace), "--judge", local_llm_url, "--dimension", "ToolCalls",
            "--budget-tokens", "500", "--no-cache"]  # fmt: skip
    found = {}
    for extra in ([], ["--no-score-distribution"]):
        out = tmp_path / f"reviews{len(extra)}.json"
        assert main([*args, *extra, "--out", str(out)]) in (0, 4), extra  # 4: unscored
        (item,) = json.loads(out.read_text())["trajectories"]
        found[bool(extra)] = item["reviews"]["ToolCalls"]
    assert found[True]["score_distribution"] is None
    assert found[True]["answer"] == found[False]["answer"]  # greedy, seed 42: the same answer
    if found[False]["status"] == "scored":
        assert found[False]["score_distribution"] is not None
