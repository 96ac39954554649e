"""Reports: JSON documents written by the commands (versioned by `kind`), loaders that read them
back for `qi`, `sxs` and `compare`, and Markdown renderings. Review evidence cites step ids;
Markdown renders them as `S12` links to anchors `#<trajectory>-S12` of a per-trajectory page."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from agentlens.errors import ConfigError
from agentlens.reviews import TESTING_DIMENSIONS, canonical_order
from agentlens.reviews.judge.judge import DimensionReview, TrajectoryReview, aggregate
from agentlens.reviews.judge.parse import Evidence, ParsedReview, Pitfall
from agentlens.reviews.judge.score_probs import ScoreDistribution

REVIEWS_KIND = "agentlens.reviews/1"
VERIFY_KIND = "agentlens.verify/1"
SXS_KIND = "agentlens.sxs/1"


def dump(doc: dict[str, Any], path: str | Path | None = None) -> str:
    text = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text + "\n")
    return text


def load(path: str | Path, kind: str) -> dict[str, Any]:
    """A document of `kind` written by an agentlens command; any problem is one line naming it."""
    from agentlens.reviews.documents import WRITERS, check, read_json

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


def formal_results(paths: Sequence[str | Path]) -> list[int]:
    """Per-scenario `formal_verification_result` (0/1) from `agentlens verify --json` files."""
    return [r["formal_verification_result"] for r in verify_results(paths)]


def verifier_counts(paths: Sequence[str | Path]) -> tuple[int, int]:
    """(passed, total) individual verifiers over `agentlens verify` files: the side metric of
    spec §7 / decision §13.3 (the QI itself uses only the all-pass rate)."""
    statuses = [v["status"] for r in verify_results(paths) for v in r["verifier_results"]]
    return sum(s == "pass" for s in statuses), len(statuses)


def _link(traj_id: str, step: int) -> str:
    return f"[S{step}](#{traj_id}-S{step})"


def reviews_markdown(doc: dict[str, Any]) -> str:
    lines = [
        f"# Trajectory reviews (judge `{doc['judge']}`)",
        "",
        "| dimension | mean | scored | unscored rate |",
        "|---|---|---|---|",
    ]
    for dim, s in doc["summary"].items():
        mean = "–" if s["mean"] is None else f"{s['mean']:.2f}"
        lines.append(f"| {dim} | {mean} | {s['scored']} | {s['unscored_rate']:.0%} |")
    testing = [d for d in doc["summary"] if d in TESTING_DIMENSIONS]
    if testing:
        lines += ["", f"{', '.join(testing)}: the testing set, reported beside the QI, not in it."]
    anchors = {t["trajectory_id"]: f"t{i}" for i, t in enumerate(doc["trajectories"])}
    for dim, narrative in (doc.get("narratives") or {}).items():
        lines += ["", f"## {dim}: summary", "", _narrative_markdown(narrative, anchors)]
    for traj in doc["trajectories"]:
        tid = traj["trajectory_id"]
        lines += ["", f'## <a id="{anchors[tid]}"></a>{tid}', ""]
        for dim, r in traj["reviews"].items():
            score = r["score"] if r["score"] is not None else f"unscored ({r['unscored_reason']})"
            lines.append(f"- **{dim}**: {score}{_weighted(r.get('score_distribution'))}")
            for e in (r["review"] or {}).get("evidence", []):
                links = ", ".join(_link(tid, i) for i in e["step_ids"]) or "no step cited"
                lines.append(f"  - {e['aspect']} | {e['severity'] or '?'} | {links}")
            for p in (r["review"] or {}).get("pitfalls", []):
                freq = "repeated" if p["repeated"] else "once"
                lines.append(
                    f"  - pitfall {p['name']} | {p['category']} | {p['severity']} | {freq}"
                )
            burden = (r["review"] or {}).get("burden_total")
            if burden is not None:
                lines.append(f"  - burden total {burden}")
    return "\n".join(lines) + "\n"


def _weighted(dist: dict[str, Any] | None) -> str:
    """The probability-weighted score beside the discrete one, where log-probs gave it."""
    if not dist:
        return ""
    if dist["expected_score"] is None:
        low, high = dist["expected_range"]
        return f" (probability-weighted {low:.2f}–{high:.2f})"
    return f" (probability-weighted {dist['expected_score']:.2f}, spread {dist['spread']:.2f})"


def _narrative_markdown(narrative: dict[str, Any], anchors: dict[str, str]) -> str:
    """The summary text with each known `R<k>` linked to its trajectory's section (spec §5.5)."""
    if narrative["text"] is None:
        return f"(no summary: {narrative['unscored_reason']})"
    citations = narrative["citations"]

    def link(match: re.Match[str]) -> str:
        tid = citations.get(match.group(0))
        return f"[{match.group(0)}](#{anchors[tid]})" if tid in anchors else match.group(0)

    text = html.escape(narrative["text"], quote=False)  # model output is never rendered as HTML
    return re.sub(r"\bR\d+\b", link, text).replace("\n", "  \n")


def compare_markdown(doc: dict[str, Any]) -> str:
    lines = [
        f"# Run comparison: `{doc['run_1']}` (reference) vs `{doc['run_2']}`",
        "",
        f"**Status: {doc['status']}** (exit code {doc['exit_code']})",
        "",
        "| check | test | run 1 | run 2 | ratio | p | flag | reason |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in doc["checks"]:
        values = " | ".join(format_value(c[k]) for k in ("v1", "v2", "ratio", "p_value"))
        reason = c["reason"].replace("|", "/")
        lines.append(f"| {c['name']} | {c['test']} | {values} | {check_flag(c)} | {reason} |")
    return "\n".join(lines) + "\n"


def check_flag(check: dict[str, Any]) -> str:
    return "ALERT" if check["alert"] else "warning" if check["warning"] else "ok"


def format_value(value: Any) -> str:
    """A check's figure as both the Markdown and the terminal table show it."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
