"""Across score runs: when runs score the same trajectories, the score change per trajectory."""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.list_text import counted
from agentlens.report.html import Cell, details, fmt, stat_cards, table, text
from agentlens.report.scores import ScoreRow
from agentlens.report.stats import mean, median
from agentlens.store import Run


def shared_ids(runs: Sequence[tuple[Run, list[ScoreRow]]]) -> list[str]:
    """Trajectory ids scored by at least two of the runs, in first-seen order."""
    seen: dict[str, int] = {}
    for _, rows in runs:
        for tid in {r.trajectory_id for r in rows}:
            seen[tid] = seen.get(tid, 0) + 1
    order = [r.trajectory_id for _, rows in runs for r in rows]
    return [t for t in dict.fromkeys(order) if seen[t] >= 2]


def run_name(run: Run) -> str:
    return f"{run.id[:8]} {run.label}" if run.label else run.id[:8]


def comparison(runs: Sequence[tuple[Run, list[ScoreRow]]]) -> str:
    """A row per shared trajectory: its score in each run and Δ = last run − first run that has it
    (runs ordered oldest first), largest changes first."""
    ids = shared_ids(runs)
    if not ids:
        return ""
    ordered = sorted(runs, key=lambda pair: pair[0].created)
    by_run = [{r.trajectory_id: r for r in rows} for _, rows in ordered]
    deltas = {tid: _delta([m.get(tid) for m in by_run]) for tid in ids}
    lines = sorted(ids, key=lambda t: (-abs(deltas[t] or 0), t))
    head = ["trajectory", "model", *(run_name(run) for run, _ in ordered), "Δ score", "tiers"]
    body = [_line(tid, [m.get(tid) for m in by_run], deltas[tid]) for tid in lines]
    changed = [d for d in deltas.values() if d]
    cards = [
        ("shared trajectories", fmt(len(ids))),
        ("scores changed", fmt(len(changed))),
        ("mean Δ", fmt(mean(deltas.values()), 2)),
        ("median |Δ|", fmt(median(abs(d) for d in deltas.values() if d is not None), 2)),
    ]
    caption = "Δ = score in the newest run minus the oldest that scored the trajectory."
    return stat_cards(cards) + details(
        f"{counted(len(ids), 'trajectory')} in two or more runs",
        table(head, body, caption=caption, class_="runs"),
        open_=True,
    )


def _delta(found: Sequence[ScoreRow | None]) -> float | None:
    scores = [r.score for r in found if r is not None and r.score is not None]
    return scores[-1] - scores[0] if len(scores) >= 2 else None


def _line(tid: str, found: Sequence[ScoreRow | None], delta: float | None) -> list[object]:
    first = next(r for r in found if r is not None)
    scores = [Cell(r.score, title=r.score_reason) if r else None for r in found]
    sign = "pos" if (delta or 0) > 0 else "neg" if (delta or 0) < 0 else None
    shown = (
        None if delta is None else Cell(f"{delta:+.1f}", class_=f"num {sign}" if sign else "num")
    )
    tiers = " → ".join(dict.fromkeys(r.tier for r in found if r is not None))
    return [tid, first.model, *scores, shown, tiers]


def overview_note(n_runs: int) -> str:
    return text(
        "p",
        f"All {n_runs} score runs together (a trajectory scored by two runs counts twice); "
        "each run has its own section below.",
        class_="note",
    )
