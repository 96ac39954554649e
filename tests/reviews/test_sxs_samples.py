"""SxS: the task appears once in the pair prompt; with `samples` N > 1 each order is judged N
times on the real local model, and the mean score's CI is the arithmetic of the recorded answers."""

from __future__ import annotations

import asyncio
import statistics

import pytest

from agentlens.formats.stream import read_paths
from agentlens.providers import ProvidersConfig, RetryPolicy, get_provider
from agentlens.reviews.sxs.judge_pairs import Sampling, run_sxs
from agentlens.reviews.sxs.pairing import Side, task_key
from agentlens.reviews.sxs.prompt import build_messages
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"


@pytest.fixture(scope="module")
def pair():
    trajs = read_paths([TASK]).trajectories
    passing = sorted(
        (t for t in trajs if t.outcome.status == "passed"), key=lambda t: (len(t.steps), t.id)
    )
    return passing[0], passing[1]


def test_the_task_appears_once_in_the_pair_prompt(pair) -> None:
    a, b = pair
    assert a.task and a.steps[0].kind == "user"
    (_, user) = build_messages("ToolCalls", a, b, None, None, budget_tokens=4000)
    text = user["content"]
    probe = a.task.strip()[:120]
    assert text.count(probe) == 1, "the task is repeated"
    assert text.index("<task>") < text.index(probe) < text.index("</task>")
    assert text.count("[S0] user: (the task, shown above)") == 2


@pytest.mark.llm
def test_sxs_samples_with_local_model(local_gguf_path, pair) -> None:
    client = get_provider(
        f"llamacpp:{local_gguf_path}", role="judge", cache=False,
        config=ProvidersConfig(timeout_s=900), retry=RetryPolicy(timeout_s=900, total_s=1800),
    )  # fmt: skip
    a = Side({task_key(pair[0]): pair[0]}, {})
    b = Side({task_key(pair[1]): pair[1]}, {})
    result = asyncio.run(
        run_sxs(
            client, a, b, dimensions=["ToolCalls"], budget_tokens=600, max_tokens=48,
            sampling=Sampling(2, 0.7),
        )
    )["ToolCalls"]  # fmt: skip
    (cell,) = result.cells
    assert client.stats.calls == 4  # 2 orders x 2 samples
    assert [len(o.scores) for o in cell.samples] == [2, 2]
    # the primary answers are the first scored sample of each order, oriented A-vs-B
    forward, swapped = cell.samples
    assert cell.forward == next((s for s in forward.scores if s is not None), None)
    assert cell.swapped == next((s for s in swapped.scores if s is not None), None)
    means = [statistics.mean(k) for k in (forward.kept, swapped.kept) if k]
    if not means:
        assert cell.score is None and result.samples is None
        return
    assert cell.score == pytest.approx(statistics.mean(means))
    ci = result.samples
    assert ci is not None and ci.differences == 1
    orders = [o for o in (forward, swapped) if o.kept]
    known = [statistics.variance(o.kept) / len(o.kept) / 25 for o in orders if len(o.kept) > 1]
    assert ci.variance == pytest.approx(sum(known) / len(orders) ** 2)
    assert ci.orders_without_variance == sum(len(o.kept) == 1 for o in orders)
    low, high = ci.ci
    assert (high - low) / 2 == pytest.approx(1.959964 * ci.variance**0.5)
    assert result.to_dict()["samples"]["ci95"] == [round(low, 4), round(high, 4)]
