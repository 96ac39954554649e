"""Markdown renderings of the review documents (`review --md`, `compare --md`). Each trajectory's
section is anchored `t<i>` by its place, never by its id (trace text, and ids may repeat).
Review evidence cites step ids; Markdown renders them as `S12` links to `#t<i>-S12`, the
section's line of what cites step 12."""

from __future__ import annotations

import re
from typing import Any

from agentlens.list_text import counted
from agentlens.markdown_text import markdown_text
from agentlens.reviews import TESTING_DIMENSIONS

SCALE = (
    "Each review scores 0, 0.5 or 1 (1 best); the mean is over the scored reviews, "
    "the unscored ones (no score the parser could read) left out."
)


def _link(section: str, step: int) -> str:
    return f"[S{step}](#{section}-S{step})"


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
    lines += ["", SCALE]
    for dim, s in doc["summary"].items():
        if s.get("weighted_mean") is not None:
            lines.append(
                f"\n{dim} probability-weighted mean {s['weighted_mean']:.2f}: "
                f"{s['weighted_mean_reason']}"
            )
        elif s.get("weighted_mean_reason") and _has_distributions(doc, dim):
            # log-probs, yet no review gave a value (all ranges): say why, as the JSON does
            lines.append(f"\n{dim}: no probability-weighted mean: {s['weighted_mean_reason']}")
    for dim, s in doc["summary"].items():
        if sampled := s.get("samples"):
            lines.append(
                f"\n{dim}, {counted(sampled['items'], 'item')} sampled: all samples agree on "
                f"{sampled['agreement_rate']:.0%}, pairwise agreement "
                f"{sampled['pairwise_agreement']:.0%}, variance of the mean "
                f"{sampled['variance_of_mean']:.3f}"
            )
    testing = [d for d in doc["summary"] if d in TESTING_DIMENSIONS]
    if testing:
        lines += ["", f"{', '.join(testing)}: the testing set, reported beside the QI, not in it."]
    anchors: dict[str, str] = {}  # a summary's citation: the id's first section
    for i, traj in enumerate(doc["trajectories"]):
        anchors.setdefault(traj["trajectory_id"], f"t{i}")
    for dim, narrative in (doc.get("narratives") or {}).items():
        lines += ["", f"## {dim}: summary", "", _narrative_markdown(narrative, anchors)]
    for i, traj in enumerate(doc["trajectories"]):
        lines += _trajectory_lines(f"t{i}", traj)
    return "\n".join(lines) + "\n"


def _has_distributions(doc: dict[str, Any], dim: str) -> bool:
    """Did the judge give log-probs for `dim` (a free-text judge has no weighted mean to miss)."""
    return any(
        (traj["reviews"].get(dim) or {}).get("score_distribution") for traj in doc["trajectories"]
    )


def _trajectory_lines(section: str, traj: dict[str, Any]) -> list[str]:
    lines = ["", f'## <a id="{section}"></a>{markdown_text(traj["trajectory_id"])}', ""]
    for dim, r in traj["reviews"].items():
        reason = markdown_text(r["unscored_reason"])
        score = r["score"] if r["score"] is not None else f"unscored ({reason})"
        weighted = _weighted(r.get("score_distribution"))
        lines.append(f"- **{dim}**: {score}{weighted}{_sampled(r.get('sample_stats'))}")
        for e in (r["review"] or {}).get("evidence", []):
            aspect, severity = markdown_text(e["aspect"]), markdown_text(e["severity"] or "?")
            lines.append(f"  - {aspect} | {severity} | {_cited(section, e)}")
        for p in (r["review"] or {}).get("pitfalls", []):
            freq = "repeated" if p["repeated"] else "once"
            named = " | ".join(markdown_text(p[k]) for k in ("name", "category", "severity"))
            lines.append(f"  - pitfall {named} | {freq}")
        burden = (r["review"] or {}).get("burden_total")
        if burden is not None:
            lines.append(f"  - burden total {burden}")
    return lines + _cited_steps(section, traj["reviews"])


def _cited(section: str, evidence: dict[str, Any]) -> str:
    """The links to the steps cited; with none, the judge's own evidence text, which then holds
    all there is to check (`Evidence: 1`, or a step past the trajectory's end)."""
    links = ", ".join(_link(section, i) for i in evidence["step_ids"])
    if links:
        return links
    said = (evidence.get("evidence") or "").strip()
    return f"no step cited: {markdown_text(said)}" if said else "no step cited"


def _cited_steps(section: str, reviews: dict[str, Any]) -> list[str]:
    """The targets of the section's evidence links: one line per cited step, naming what cites
    it (the steps' text is not in the reviews document)."""
    cited: dict[int, dict[str, None]] = {}
    for dim, r in reviews.items():
        for e in (r["review"] or {}).get("evidence", []):
            for step in e["step_ids"]:
                cited.setdefault(step, {})[f"{dim} ({markdown_text(e['aspect'])})"] = None
    if not cited:
        return []
    lines = ["- **steps cited**"]
    for step in sorted(cited):
        lines.append(f'  - <a id="{section}-S{step}"></a>S{step}: {"; ".join(cited[step])}')
    return lines


def _weighted(dist: dict[str, Any] | None) -> str:
    """The probability-weighted score beside the discrete one, where log-probs gave it."""
    if not dist:
        return ""
    if dist["expected_score"] is None:
        low, high = dist["expected_range"]
        return f" (probability-weighted {low:.2f}–{high:.2f})"
    return f" (probability-weighted {dist['expected_score']:.2f}, spread {dist['spread']:.2f})"


def _sampled(stats: dict[str, Any] | None) -> str:
    """With `--samples N`: the N scores, their mean and variance (the score shown is sample 0's)."""
    if not stats or stats.get("n", 1) < 2:
        return ""
    scores = ", ".join("unscored" if x is None else f"{x:g}" for x in stats["scores"])
    mean = "n/a" if stats["mean"] is None else f"{stats['mean']:.2f}"
    variance = "n/a" if stats["variance"] is None else f"{stats['variance']:.2f}"
    return f"; {counted(stats['n'], 'sample')} [{scores}], mean {mean}, variance {variance}"


def _narrative_markdown(narrative: dict[str, Any], anchors: dict[str, str]) -> str:
    """The summary text with each known `R<k>` linked to its trajectory's section (spec §5.5)."""
    if narrative["text"] is None:
        return f"(no summary: {markdown_text(narrative['unscored_reason'])})"
    citations = narrative["citations"]

    def link(match: re.Match[str]) -> str:
        tid = citations.get(match.group(0))
        return f"[{match.group(0)}](#{anchors[tid]})" if tid in anchors else match.group(0)

    # model output is shown, never rendered: escaped line by line, then the citations linked
    text = "\n".join(markdown_text(line) for line in narrative["text"].splitlines())
    return re.sub(r"\bR\d+\b", link, text).replace("\n", "  \n")


def compare_markdown(doc: dict[str, Any]) -> str:
    """Tool names, task ids and termination reasons are trace text: shown, never rendered."""
    runs = markdown_text(doc["run_1"]), markdown_text(doc["run_2"])
    lines = [
        f"# Run comparison: {runs[0]} (reference) vs {runs[1]}",
        "",
        f"**Status: {doc['status']}** (exit code {doc['exit_code']})",
        "",
        "| check | test | run 1 | run 2 | ratio | p | flag | reason |",
        "|---|---|---|---|---|---|---|---|",
    ]
    notes = numbered_details(doc["checks"])
    for c in doc["checks"]:
        values = " | ".join(format_value(c[k]) for k in ("v1", "v2", "ratio", "p_value"))
        name, test, reason = (markdown_text(c[k]) for k in ("name", "test", "reason"))
        reason += note_mark(notes.get(id(c)))
        lines.append(f"| {name} | {test} | {values} | {check_flag(c)} | {reason} |")
    if notes:
        lines += ["", "Notes: the full arithmetic of the rows marked [n].", ""]
        for c in doc["checks"]:
            if id(c) in notes:
                detail = markdown_text(c["detail"])
                lines.append(f"{notes[id(c)]}. **{markdown_text(c['name'])}**: {detail}")
    return "\n".join(lines) + "\n"


def numbered_details(checks: list[dict[str, Any]]) -> dict[int, int]:
    """Note number of each check with a `detail`, keyed by the check's id, from 1 in row order."""
    with_detail = [c for c in checks if c.get("detail")]
    return {id(c): n for n, c in enumerate(with_detail, 1)}


def note_mark(number: int | None) -> str:
    return "" if number is None else f" [{number}]"


def check_flag(check: dict[str, Any]) -> str:
    return "ALERT" if check["alert"] else "warning" if check["warning"] else "ok"


def format_value(value: Any) -> str:
    """A check's figure as both the Markdown and the terminal table show it."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
