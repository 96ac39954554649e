"""`review --samples N` on the real local model (SmolLM2-135M, in process): each item is judged N
times with its own seed, the cache keeps the samples apart, and the variance, agreement and the
QI's CI are the arithmetic of the answers actually recorded (recomputed here from the answers'
text, not from the figures the code reports)."""

from __future__ import annotations

import json
import statistics
from itertools import combinations

import pytest

from agentlens.cli import main
from agentlens.formats.load import read_path
from agentlens.jsonio import dump
from agentlens.providers import ProvidersConfig, RetryPolicy, get_provider
from agentlens.providers.cache import ResponseCache
from agentlens.reviews.documents import reviews_document
from agentlens.reviews.judge.ask import SAMPLE_TEMPERATURE, sampling_temperature
from agentlens.reviews.judge.judge import JudgeSettings, review_trajectory
from agentlens.reviews.judge.plan import review_context
from agentlens.reviews.judge.samples import ItemSamples, summarize_samples
from agentlens.reviews.judge.structured import parse_structured
from agentlens.reviews.qi import qi_report
from tests.conftest import BENCH

N = 3
DIMS = ("ToolCalls",)  # each call costs minutes on a loaded 2-core box
TASK = BENCH / "trajectories" / "psf__requests-1724"


def _shortest_run() -> str:
    return str(min(TASK.glob("*.json"), key=lambda p: (p.stat().st_size, p.name)))


def _client(gguf, cache: bool = True):
    # long deadlines: on a loaded 2-core box one call of the 135M model can take minutes
    return get_provider(
        f"llamacpp:{gguf}", role="judge", cache=cache,
        config=ProvidersConfig(timeout_s=1800), retry=RetryPolicy(timeout_s=1800, total_s=3600),
    )  # fmt: skip


SETTINGS = JudgeSettings(budget_tokens=700, max_tokens=64, samples=N, temperature=0.7)


@pytest.fixture(scope="module")
def sampled(local_gguf_path, tmp_path_factory):
    """One real dev trajectory reviewed with N = 3, written as `review --out` writes it."""
    out = tmp_path_factory.mktemp("samples") / "reviews.json"
    mp = pytest.MonkeyPatch()
    mp.setenv("AGENTLENS_LLM_CACHE", str(out.parent / "cache.sqlite"))
    client = _client(local_gguf_path)
    traj = read_path(_shortest_run())[0]
    ctx = review_context(traj, None)
    review = client.run(
        review_trajectory(client, traj, dimensions=DIMS, ctx=ctx, settings=SETTINGS)
    )
    out.write_bytes(dump(reviews_document(client.name, [review])).encode())
    yield json.loads(out.read_text()), out, traj
    mp.undo()


pytestmark = pytest.mark.llm


def _recorded_scores(review: dict) -> list[float | None]:
    """Each sample's score read again from its own answer text (schema answers)."""
    steps = 10_000  # step ids are not what is checked here
    return [parse_structured(s["answer"], steps).score for s in review["samples"]]


def test_each_item_is_judged_n_times_with_its_own_seed(sampled) -> None:
    doc, _, _ = sampled
    (traj,) = doc["trajectories"]
    for dim in DIMS:
        review = traj["reviews"][dim]
        assert [s["sample"] for s in review["samples"]] == list(range(N))
        assert all(s["usage"]["completion_tokens"] > 0 for s in review["samples"])
        assert review["sample_stats"]["scores"] == _recorded_scores(review)


def test_variance_and_agreement_are_those_of_the_recorded_answers(sampled) -> None:
    doc, _, _ = sampled
    (traj,) = doc["trajectories"]
    per_item = []
    for dim in DIMS:
        review = traj["reviews"][dim]
        kept = [s for s in _recorded_scores(review) if s is not None]
        stats = review["sample_stats"]
        if len(kept) >= 2:
            assert stats["variance"] == round(statistics.variance(kept), 4)
            assert stats["agree"] == (len(set(kept)) == 1)
            pairs = list(combinations(kept, 2))
            assert stats["pairwise_agreement"] == round(
                sum(a == b for a, b in pairs) / len(pairs), 4
            )
        else:
            assert stats["variance"] is None and stats["agree"] is None
        if kept:
            assert stats["mean"] == round(statistics.mean(kept), 4)
            assert doc["summary"][dim]["mean"] == round(statistics.mean(kept), 2)
        per_item.append((dim, kept))
    for dim, kept in per_item:
        summary = doc["summary"][dim]["samples"]
        assert summary["compared_items"] == (1 if len(kept) >= 2 else 0)
        if len(kept) >= 2:
            # one item: Var(mean) = its variance / its scored samples / 1²
            expected = statistics.variance(kept) / len(kept)
            assert summary["variance_of_mean"] == round(expected, 6)
            assert summary["agreement_rate"] == (1.0 if len(set(kept)) == 1 else 0.0)


def test_qi_carries_the_sample_variance_into_its_ci(sampled) -> None:
    doc, out, _ = sampled
    report = qi_report(str(out), [], 1.0, [])
    variance = {
        d: doc["summary"][d]["samples"]["variance_of_mean"]
        for d in DIMS
        if doc["summary"][d]["samples"]["variance_of_mean"] is not None
    }
    assert report.result.judge_variance == pytest.approx(variance, abs=1e-6)
    if report.result.value is None:  # the other three components were not reviewed here
        assert "n/a" in report.result.reason
    from agentlens.reviews import DIMENSIONS
    from agentlens.reviews.qi import quality_index

    full = {d: doc["summary"][d]["mean"] if d in DIMS else 0.5 for d in DIMENSIONS}
    qi = quality_index(1.0, full, judge_variance=variance)
    if not variance:
        assert qi.ci is None
        return
    var_qi = (100 / 6) ** 2 * sum(variance.values())
    assert qi.variance == pytest.approx(var_qi)
    low, high = qi.ci
    assert (high - low) / 2 == pytest.approx(1.959964 * var_qi**0.5)
    assert f"= {var_qi:.4g}" in qi.reason and f"[{low:.2f}, {high:.2f}]" in qi.reason


def test_the_cache_serves_each_sample_its_own_answer(sampled, local_gguf_path) -> None:
    """A second run is served from the cache, sample k gets sample k's answer, and the cache
    holds one entry per sample call (the N requests differ by seed)."""
    doc, out, traj = sampled
    samples = [s for d in DIMS for s in doc["trajectories"][0]["reviews"][d]["samples"]]
    calls = sum(s["attempts"] for s in samples)
    assert ResponseCache(out.parent / "cache.sqlite").stats().entries == calls
    client = _client(local_gguf_path)
    ctx = review_context(traj, None)
    again = client.run(review_trajectory(client, traj, dimensions=DIMS, ctx=ctx, settings=SETTINGS))
    assert client.stats.calls == 0 and client.stats.cache_hits == calls
    for dim in DIMS:
        first = [s["answer"] for s in doc["trajectories"][0]["reviews"][dim]["samples"]]
        assert [s.answer for s in again.reviews[dim].samples] == first


def test_estimate_counts_n_times_the_calls(local_gguf_path, capsys) -> None:
    base = ["review", _shortest_run(), "--judge", f"llamacpp:{local_gguf_path}", "--estimate"]
    base += ["--json", "--dimension", "ToolCalls"]
    assert main(base) == 0
    one = json.loads(capsys.readouterr().out)["estimate"][0]
    assert main([*base, "--samples", "3"]) == 0
    three = json.loads(capsys.readouterr().out)["estimate"][0]
    assert three["calls"] == 3 * one["calls"]
    assert three["input_tokens"] == 3 * one["input_tokens"]
    assert three["output_tokens_max"] == 3 * one["output_tokens_max"]


def test_sampling_temperature_comes_from_the_role(tmp_path, monkeypatch) -> None:
    from agentlens.reviews.judge.ask import configured_temperature

    config = tmp_path / "agentlens.yaml"
    config.write_text("llm:\n  roles:\n    judge: {model: 'openai:x', temperature: 0.3}\n")
    loaded = ProvidersConfig.load([config])
    assert configured_temperature("judge", loaded) == 0.3
    assert sampling_temperature(0.3, 3) == 0.3
    assert sampling_temperature(None, 3) == SAMPLE_TEMPERATURE
    assert sampling_temperature(None, 1) == 0.0  # one sample: as before


def test_summary_of_items_matches_its_definition() -> None:
    """Agreement and variance over items with unscored samples: only scored samples vote."""
    items = [
        ItemSamples((0.5, 0.5, 1.0)),
        ItemSamples((1.0, None, 1.0)),
        ItemSamples((0.0, None, None)),
    ]
    summary = summarize_samples(items)
    assert summary.compared == 2  # the third has one scored sample
    assert summary.agreement_rate == 0.5
    kept = [[0.5, 0.5, 1.0], [1.0, 1.0]]
    pairwise = [
        sum(a == b for a, b in combinations(k, 2)) / len(list(combinations(k, 2))) for k in kept
    ]
    assert summary.pairwise_agreement == pytest.approx(statistics.mean(pairwise))
    expected = sum(statistics.variance(k) / len(k) for k in kept) / 3**2
    assert summary.variance_of_mean == pytest.approx(expected)


def test_the_markdown_shows_each_items_samples_and_each_dimensions_agreement(sampled) -> None:
    from agentlens.reviews.markdown import reviews_markdown

    doc, _, _ = sampled
    text = reviews_markdown(doc)
    for dim, review in doc["trajectories"][0]["reviews"].items():
        stats = review["sample_stats"]
        shown = ", ".join("unscored" if x is None else f"{x:g}" for x in stats["scores"])
        assert f"- **{dim}**: " in text and f"3 samples [{shown}]" in text
        rate = doc["summary"][dim]["samples"]["agreement_rate"]
        assert f"{dim}, 1 item sampled: all samples agree on {rate:.0%}" in text
