"""The JSON documents the commands hand each other (`review --out`, `verify --out`, `sxs --out`,
`qi --json`): their kinds, how each is built and read back. A document read back is checked: a
value of the wrong type or out of range is one `ConfigError` naming the file and the JSON path,
never a crash later on. Only the fields a reader uses are checked; other fields are left alone."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from agentlens.errors import ConfigError
from agentlens.jsonio import read_json
from agentlens.reviews import canonical_order
from agentlens.reviews.judge.judge import DimensionReview, TrajectoryReview, aggregate
from agentlens.reviews.judge.parse import Evidence, ParsedReview, Pitfall
from agentlens.reviews.judge.score_probs import ScoreDistribution
from agentlens.verification import VERIFY_KIND

REVIEWS_KIND = "agentlens.reviews/1"
SXS_KIND = "agentlens.sxs/1"

Count = Annotated[int, msgspec.Meta(ge=0)]
Fraction = Annotated[float, msgspec.Meta(ge=0, le=1)]
StepIds = list[Count]


class _Evidence(msgspec.Struct):
    aspect: str
    severity: str | None
    evidence: str
    step_ids: StepIds
    unknown_step_ids: StepIds = []


class _Pitfall(msgspec.Struct):
    name: str
    category: str | None
    severity: str | None
    repeated: bool
    evidence: str
    step_ids: StepIds
    mechanism: str | None = None


class _Parsed(msgspec.Struct):
    score: Fraction | None
    unscored_reason: str | None
    review: str
    evidence: list[_Evidence]
    pitfalls: list[_Pitfall]
    burden_total: Count | None
    stated_burden_total: Count | None


class _Dimension(msgspec.Struct):
    dimension: str
    score: Fraction | None
    unscored_reason: str | None = None
    review: _Parsed | None = None
    answer: str = ""
    prompt_tokens_estimate: Count = 0
    usage: dict[str, Count] | None = None


class _Trajectory(msgspec.Struct):
    trajectory_id: str
    reviews: dict[str, _Dimension]
    task_id: str | None = None
    steps: Count = 0
    transcript_tokens: Count = 0
    original_transcript_tokens: Count = 0


class _Reviews(msgspec.Struct):
    trajectories: list[_Trajectory]
    judge: str | None = None


class _TestMetrics(msgspec.Struct):
    tests: Count | None = None
    passed: Count = 0
    coverage_percent: Annotated[float, msgspec.Meta(ge=0, le=100)] | None = None


class _Verifier(msgspec.Struct):
    type: str
    status: Literal["pass", "fail", "error", "skipped"]
    metrics: dict[str, Any] | None = None


class _Scenario(msgspec.Struct):
    formal_verification_result: Literal[0, 1] | None  # None: a check skipped, none failed
    verifier_results: list[_Verifier]
    trajectory_id: str | None = None  # None: `verify` was given no --trajectory


class _Verify(msgspec.Struct):
    results: list[_Scenario]


class _Cell(msgspec.Struct):
    task: str
    forward: Annotated[int, msgspec.Meta(ge=-5, le=5)] | None


class _SxsTrinomial(msgspec.Struct):
    reason: str


class _SxsDimension(msgspec.Struct):
    mean_score: Annotated[float, msgspec.Meta(ge=-1, le=1)] | None = None
    p_value: Fraction | None = None
    trinomial: _SxsTrinomial | None = None
    warning: bool = False
    alert: bool = False
    reason: str = ""
    cells: list[_Cell] = []


class _Sxs(msgspec.Struct):
    dimensions: dict[str, _SxsDimension]


class _Qi(msgspec.Struct):
    components: dict[str, Fraction | None]


SCHEMAS: dict[str, type[msgspec.Struct]] = {
    REVIEWS_KIND: _Reviews,
    VERIFY_KIND: _Verify,
    SXS_KIND: _Sxs,
    "qi": _Qi,
}
WRITERS = {
    REVIEWS_KIND: "agentlens review --out",
    VERIFY_KIND: "agentlens verify --out",
    SXS_KIND: "agentlens sxs --out",
    "qi": "agentlens qi --json",
}


def check(path: str | Path, doc: Any, kind: str) -> None:
    """Refuse a document whose fields a reader of `kind` uses have the wrong type or range."""
    try:
        msgspec.convert(doc, SCHEMAS[kind])
        if kind == VERIFY_KIND:
            for i, result in enumerate(doc["results"]):
                for j, verifier in enumerate(result["verifier_results"]):
                    if verifier["type"] == "RunTestsVerifier" and verifier.get("metrics"):
                        where = f"$.results[{i}].verifier_results[{j}].metrics"
                        _convert(verifier["metrics"], _TestMetrics, where)
    except msgspec.ValidationError as exc:
        raise ConfigError(
            f"{path}: not a valid {WRITERS[kind]} file: {exc} "
            f"(write it again with `{WRITERS[kind]}`)"
        ) from exc


def _convert(value: Any, schema: type[msgspec.Struct], where: str) -> None:
    try:
        msgspec.convert(value, schema)
    except msgspec.ValidationError as exc:
        text = str(exc)
        text = (
            text.replace("at `$", f"at `{where}") if "at `$" in text else f"{text} - at `{where}`"
        )
        raise msgspec.ValidationError(text) from exc


def load(path: str | Path, kind: str) -> dict[str, Any]:
    """A document of `kind` written by an agentlens command; any problem is one line naming it."""
    doc = read_json(path)
    found = doc.get("kind") if isinstance(doc, dict) else None
    if isinstance(found, str) and found in WRITERS and found != kind:
        raise ConfigError(
            f"{path}: an {found} file (from `{WRITERS[found]}`), "
            f"expected an {kind} file (from `{WRITERS[kind]}`)"
        )
    if found != kind:
        raise ConfigError(f"{path}: not an {kind} file (write it with `{WRITERS[kind]}`)")
    check(path, doc, kind)
    return doc


def reviews_document(judge: str, reviews: Sequence[TrajectoryReview]) -> dict[str, Any]:
    return {
        "kind": REVIEWS_KIND,
        "judge": judge,
        "summary": {
            d: s.to_dict() for d, s in aggregate(reviews, reviewed_dimensions(reviews)).items()
        },
        "trajectories": [r.to_dict() for r in reviews],
    }


def reviewed_dimensions(reviews: Sequence[TrajectoryReview]) -> list[str]:
    """The dimensions present in any review, in the canonical order."""
    return canonical_order(d for r in reviews for d in r.reviews)


def load_reviews(path: str | Path) -> list[TrajectoryReview]:
    return [_trajectory_review(t) for t in load(path, REVIEWS_KIND)["trajectories"]]


def _trajectory_review(doc: dict[str, Any]) -> TrajectoryReview:
    reviews = {d: _dimension_review(r) for d, r in doc["reviews"].items()}
    return TrajectoryReview(
        doc["trajectory_id"],
        doc.get("task_id"),
        doc.get("steps", 0),
        doc.get("transcript_tokens", 0),
        doc.get("original_transcript_tokens", 0),
        reviews,
    )


def _dimension_review(doc: dict[str, Any]) -> DimensionReview:
    raw = doc.get("review")
    parsed = None
    if raw:
        parsed = ParsedReview(
            raw["score"],
            raw["unscored_reason"],
            raw["review"],
            [Evidence(**e) for e in raw["evidence"]],
            [Pitfall(**p) for p in raw["pitfalls"]],
            raw["burden_total"],
            raw["stated_burden_total"],
        )
    return DimensionReview(
        doc["dimension"],
        doc["score"],
        doc.get("unscored_reason"),
        parsed,
        doc.get("answer", ""),
        doc.get("prompt_tokens_estimate", 0),
        doc.get("usage") or {},
        prompt_sha256=doc.get("prompt_sha256", ""),
        mode=doc.get("mode", "free text"),
        attempts=doc.get("attempts", 1),
        distribution=_distribution(doc.get("score_distribution")),
        sample=doc.get("sample", 0),
        samples=[_dimension_review(s) for s in doc.get("samples") or []],
    )


def _distribution(doc: dict[str, Any] | None) -> ScoreDistribution | None:
    if not doc:
        return None
    low, high = doc["expected_range"]
    return ScoreDistribution(
        doc["probabilities"], doc["valid_mass"], doc["expected_score"], (low, high), doc["spread"]
    )


def verify_results(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """Every scenario result of `agentlens verify` files, in order."""
    return [r for path in paths for r in load(path, VERIFY_KIND)["results"]]


def formal_of(results: Sequence[dict[str, Any]]) -> list[int]:
    """Per-scenario `formal_verification_result` (0/1) of `agentlens verify` results; a
    scenario not scored (a check skipped for a missing tool, none failed) is left out."""
    found = [r["formal_verification_result"] for r in results]
    return [r for r in found if r is not None]


def unscored_scenarios(results: Sequence[dict[str, Any]]) -> int:
    """Scenarios left out of the formal pass rate because a check was skipped."""
    return sum(r["formal_verification_result"] is None for r in results)


def verifier_counts_of(results: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """(passed, total) individual verifiers over `agentlens verify` results: the side metric of
    spec §7 / decision §13.3 (the QI itself uses only the all-pass rate)."""
    statuses = [v["status"] for r in results for v in r["verifier_results"]]
    run = [s for s in statuses if s != "skipped"]  # a skipped check is not scored
    return sum(s == "pass" for s in run), len(run)


def same_run(given: Any, run: Any) -> bool:
    """Whether a run a document names (an SxS file's `run_a`, `run_b`) is `run`: the same text,
    or the same path once resolved (`runs/a` and `./runs/a`)."""
    if not isinstance(given, str) or not isinstance(run, str):
        return False
    return given == run or Path(given).resolve() == Path(run).resolve()
