"""Two runs side by side (`agentlens sxs`): pair their trajectories and reviews, choose what each
pair is judged on, judge every pair, and the `sxs --out` document. The `released` profile
reproduces the released evaluator's p, alert, review presence and trinomial test (spec §8.4),
and its tagged answer format; the default asks for a JSON answer wherever the backend can
constrain one (`sxs.structured`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentlens.providers.client import LLMClient
from agentlens.reviews import TESTING_DIMENSIONS
from agentlens.reviews.auto_metric_set import narrowed, pair_dimensions, tagged_testing
from agentlens.reviews.documents import SXS_KIND
from agentlens.reviews.judge.judge import TrajectoryReview
from agentlens.reviews.sxs.judge_pairs import DimensionResult, Sampling, run_sxs
from agentlens.reviews.sxs.pairing import Pairing, pair_runs
from agentlens.trajectory import Trajectory

SxsProfile = Literal["default", "released"]


@dataclass
class SideBySide:
    run_a: str
    run_b: str
    judge: str
    metric_set: str
    profile: SxsProfile
    pairing: Pairing
    results: dict[str, DimensionResult]
    absent_testing: list[str]
    """Testing dimensions `auto` left out although some trajectory is tagged testing."""
    answers: str = "free text"
    """"schema" (constrained JSON answers) or "free text" (tagged answers, parsed)."""
    temperature: float = 0.0
    """The temperature every judge request stated."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": SXS_KIND,
            "run_a": self.run_a,
            "run_b": self.run_b,
            "judge": self.judge,
            "metric_set": self.metric_set,
            "profile": self.profile,
            "answers": self.answers,
            "temperature": self.temperature,
            "pairing": self.pairing.to_dict(),
            "dimensions": {d: r.to_dict() for d, r in self.results.items()},
        }


@dataclass(frozen=True)
class SxsSettings:
    swap: bool = True
    budget_tokens: int = 4000
    max_tokens: int = 500
    pairing: str = "repeat"
    profile: SxsProfile = "default"
    samples: int = 1
    temperature: float | None = None
    """The judge role's `temperature`; None: 0, or 0.7 with N > 1 samples."""
    free_text: bool = False
    """Ask for the tagged answer even where the backend can constrain one to a schema."""

    def structured(self, client: LLMClient) -> bool:
        pinned = self.free_text or self.profile == "released"
        return not pinned and client.supports_json_schema


def side_by_side(
    client: LLMClient,
    runs: tuple[str, str],
    trajectories: tuple[list[Trajectory], list[Trajectory]],
    reviews: tuple[list[TrajectoryReview], list[TrajectoryReview]],
    *,
    metric_set: str,
    dimensions: tuple[str, ...] | None,
    only: tuple[str, ...] = (),
    settings: SxsSettings = SxsSettings(),
) -> SideBySide:
    """`dimensions` None is `auto`: each pair's scenario tags choose, narrowed to `only`."""
    trajs_a, trajs_b = trajectories
    paired = pair_runs(trajs_a, trajs_b, *reviews)
    released = settings.profile == "released"
    sampling = Sampling(settings.samples, settings.temperature)
    structured = settings.structured(client)
    results = client.run(
        run_sxs(
            client,
            paired.a,
            paired.b,
            dimensions=dimensions or pair_dimensions(paired.a, paired.b, only),
            swap=settings.swap,
            budget_tokens=settings.budget_tokens,
            max_tokens=settings.max_tokens,
            pairing=settings.pairing,
            ties="released" if released else "tolerant",
            llm_alert=released,
            presence="text" if released else "scored",
            trinomial_profile="released" if released else "default",
            sampling=sampling,
            structured=structured,
        )
    )
    absent = [] if dimensions else _absent_testing(only, [*trajs_a, *trajs_b], results)
    return SideBySide(
        *runs, client.name, metric_set, settings.profile, paired, results, absent,
        "schema" if structured else "free text", sampling.request_temperature,
    )  # fmt: skip


def _absent_testing(
    only: tuple[str, ...], trajs: Sequence[Trajectory], results: dict[str, DimensionResult]
) -> list[str]:
    """The testing dimensions auto left out although some trajectory is tagged testing
    (untagged runs are judged on workflows without a word)."""
    absent = [d for d in narrowed(TESTING_DIMENSIONS, only) if d not in results]
    return absent if any(map(tagged_testing, trajs)) else []
