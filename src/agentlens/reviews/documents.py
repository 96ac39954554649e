"""The shapes of the JSON documents the commands hand each other (`review --out`, `verify --out`,
`sxs --out`, `qi --json`), checked when a command reads one back: a value of the wrong type or
out of range is one `ConfigError` naming the file and the JSON path, never a crash later on.
Only the fields a reader uses are checked; other fields are left alone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import orjson

from agentlens.errors import ConfigError

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
    status: Literal["pass", "fail", "error"]
    metrics: dict[str, Any] | None = None


class _Scenario(msgspec.Struct):
    formal_verification_result: Literal[0, 1]
    verifier_results: list[_Verifier]


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
    "agentlens.reviews/1": _Reviews,
    "agentlens.verify/1": _Verify,
    "agentlens.sxs/1": _Sxs,
    "qi": _Qi,
}
WRITERS = {
    "agentlens.reviews/1": "agentlens review --out",
    "agentlens.verify/1": "agentlens verify --out",
    "agentlens.sxs/1": "agentlens sxs --out",
    "qi": "agentlens qi --json",
}


def read_json(path: str | Path) -> Any:
    """Parse a JSON file; an unreadable or malformed one is one line naming it."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        return orjson.loads(data.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from exc


def check(path: str | Path, doc: Any, kind: str) -> None:
    """Refuse a document whose fields a reader of `kind` uses have the wrong type or range."""
    try:
        msgspec.convert(doc, SCHEMAS[kind])
        if kind == "agentlens.verify/1":
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
