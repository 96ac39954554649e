"""Sections for process-score runs: headline numbers, score histogram by outcome, models ranked by
quality beside pass rate, tiers × outcomes, signal means, waste, Lucky-Pass mechanisms, runs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from agentlens.formats._unfinished import cut_note
from agentlens.list_text import counted
from agentlens.report.html import Cell, details, el, figure, fmt, percent, stat_cards, table, text
from agentlens.report.scores import (
    OUTCOMES,
    SIGNALS,
    TIERS,
    ScoreRow,
    mechanism_counts,
    model_ranking,
    pass_rate,
    signal_means,
    tier_outcome_counts,
    waste_totals,
)  # fmt: skip
from agentlens.report.stats import mean, median
from agentlens.report.style import OUTCOME_COLORS
from agentlens.report.svg import Bar, Series, bar_chart, stacked_histogram

BIN_EDGES = [float(x) for x in range(0, 101, 5)]


def score_sections(
    rows: Sequence[ScoreRow], *, trajectories: str = "open", profile: str | None = None
) -> str:
    """`trajectories`: the per-trajectory table "open", "closed" (folded) or "none"; `profile`
    (the one that scored every row) marks its tier thresholds on the histogram."""
    if not rows:
        return text("p", "This run holds no records.", class_="note")
    ranked = [r for r in rows if not r.in_sample]
    listed = _trajectories(rows, trajectories, profile)
    if not ranked:
        return _in_sample_note(rows, trajectories != "none") + listed
    plots = el("div", _histogram(ranked, profile) + _waste_chart(ranked), class_="grid")
    tables = el("div", _tier_table(ranked) + _mechanisms(ranked), class_="grid")
    return (
        _in_sample_note(rows, trajectories != "none") + headline(ranked) + _cut_note(ranked) + plots
        + text("h3", "Models, ranked by the mean score of their passing runs") + _model_table(ranked)
        + tables + text("h3", "Mean signals per model") + _signal_table(ranked) + listed
    )  # fmt: skip


IN_SAMPLE_TITLE = "a donor of its own reference: scored against a graph built from itself"


def _in_sample_note(rows: Sequence[ScoreRow], listed: bool) -> str:
    """Donors scored against their own reference score close to themselves, so they would top
    the rankings for nothing they did better: said first, and kept out of every figure."""
    donors = sum(r.in_sample for r in rows)
    if not donors:
        return ""
    table = "the trajectory table" if listed else "each run's trajectory table"
    if donors == len(rows):
        where = f"so there is no figure or ranking; they are listed in {table}"
    else:
        where = (
            "left out of every figure and ranking here (the counts, histogram, tiers and model"
            f" ranks are of the other runs) and listed last in {table}"
        )
    return text(
        "p",
        f"{donors} of {counted(len(rows), 'run')} {'was a donor' if donors == 1 else 'were donors'}"
        " of the reference they were scored against, so each was compared with a graph built from"
        f" itself (in-sample: its score flatters it): {where}, marked in-sample.",
        class_="note in-sample-note",
    )


def _cut_note(rows: Sequence[ScoreRow]) -> str:
    """Runs scored from a trace cut short (a session still being written) score only the steps
    before the cut: said above the numbers, and on each such run in the table."""
    cut = sum(r.truncated_at_line is not None for r in rows)
    if not cut:
        return ""
    was = "was" if cut == 1 else "were"
    return text(
        "p",
        f"{cut} of {counted(len(rows), 'run')} {was} scored from a trace cut short (its last line incomplete:"
        " a session still being written, or an agent killed): their scores count only the steps"
        " before the cut, marked (cut at line N) in the trajectory table.",
        class_="note",
    )


def _outcome(row: ScoreRow) -> str:
    return f"{row.outcome}{cut_note(row.truncated_at_line)}"


def _trajectories(rows: Sequence[ScoreRow], shown: str, profile: str | None = None) -> str:
    if shown == "none":
        return ""
    summary = f"All {len(rows)} scored trajectories"
    return details(summary, trajectory_table(rows, profile), open_=shown == "open")


def headline(rows: Sequence[ScoreRow]) -> str:
    rate = pass_rate(rows)
    cards = [
        ("trajectories", fmt(len(rows))),
        ("pass rate", "–" if rate is None else f"{100 * rate:.1f}%"),
        ("mean score", fmt(mean(r.score for r in rows))),
        ("median score", fmt(median(r.score for r in rows))),
    ]
    tiers = Counter(r.tier for r in rows)
    shown = [t for t in TIERS if t != "none" or tiers[t]]
    tier_cards = [(t.replace("_", " "), fmt(tiers[t]), f"tier-card tier-{t}") for t in shown]
    return stat_cards(cards) + stat_cards(tier_cards)


def tier_marks(profile: str | None) -> list[tuple[float, str]]:
    """The profile's tier thresholds as histogram marks; none for an unknown profile."""
    from agentlens.process.profiles import PROFILES

    config = PROFILES.get(profile or "")
    if config is None:
        return []
    if config.lucky_below == config.partial_fail_min:
        lower = [(config.lucky_below, f"boundary {config.lucky_below:g}")]
    else:  # sdk-compat: a pass is Lucky below one score, a failure Partial-fail from another
        lower = [(config.partial_fail_min, f"partial-fail ≥ {config.partial_fail_min:g}"),
                 (config.lucky_below, f"lucky < {config.lucky_below:g}")]  # fmt: skip
    return [*lower, (config.ideal_min, f"ideal ≥ {config.ideal_min:g}")]


def _histogram(rows: Sequence[ScoreRow], profile: str | None = None) -> str:
    series = []
    for outcome in OUTCOMES:
        scores = [r.score for r in rows if r.outcome == outcome and r.score is not None]
        if scores:
            counts = [0] * (len(BIN_EDGES) - 1)
            for s in scores:
                counts[min(int(s // 5), len(counts) - 1)] += 1
            series.append(Series(outcome, counts, OUTCOME_COLORS[outcome]))
    marks = tier_marks(profile)
    plot = stacked_histogram(BIN_EDGES, series, x_label="composite score (0–100)", marks=marks)
    note = f"; dashed: the {profile} profile's tier thresholds" if marks else ""
    return figure(plot, f"Score distribution, stacked by outcome (bins of 5 points){note}.")


def _rank(rank: int | None) -> object:
    return "–" if rank is None else rank


def _waste_chart(rows: Sequence[ScoreRow]) -> str:
    totals = waste_totals(rows)
    bars = [
        Bar(kind.replace("_", " "), steps,
            f"{kind}: {counted(steps, 'wasted step')} in {counted(n, 'instance')}",
            note=counted(n, "instance"))
        for kind, (n, steps) in totals.items()
    ]  # fmt: skip
    if not bars:
        return text("p", "No waste findings in these records.", class_="note")
    return figure(bar_chart(bars), "Wasted steps by kind, summed over all trajectories.")


def _model_table(rows: Sequence[ScoreRow]) -> str:
    head = [
        "quality rank",
        "model",
        "runs",
        "mean score (passing)",
        "median score (passing)",
        "pass rate",
        "pass-rate rank",
    ]
    body = [
        [_rank(m.quality_rank), m.model, m.runs, m.mean_score, m.median_score,
         "–" if m.pass_rate is None else f"{100 * m.pass_rate:.1f}%", _rank(m.pass_rank)]
        for m in model_ranking(rows)
    ]  # fmt: skip
    return table(
        head,
        body,
        caption="Scores of passing runs only, as `cohort` ranks models (a model with none has no"
        " quality rank); pass rate counts runs with a pass/fail label; ties share a rank.",
    )


def _tier_table(rows: Sequence[ScoreRow]) -> str:
    counts = tier_outcome_counts(rows)
    outcomes = [o for o in OUTCOMES if any(k[1] == o for k in counts)]
    body = [
        [Cell(tier, class_=f"tier-{tier}"), *(counts.get((tier, o), 0) for o in outcomes),
         sum(counts.get((tier, o), 0) for o in outcomes)]
        for tier in TIERS if any(counts.get((tier, o)) for o in outcomes)
    ]  # fmt: skip
    totals = [
        "total",
        *(sum(c for k, c in counts.items() if k[1] == o) for o in outcomes),
        len(rows),
    ]
    return el(
        "div", text("h3", "Tiers × outcomes") + table(["tier", *outcomes, "total"], [*body, totals])
    )


def _mechanisms(rows: Sequence[ScoreRow]) -> str:
    counts = mechanism_counts(rows)
    lucky = sum(r.tier == "lucky" for r in rows)
    title = text("h3", "Lucky-Pass mechanisms")
    if not counts:
        return el(
            "div",
            title
            + text("p", f"No mechanism assigned ({counted(lucky, 'lucky pass')}).", class_="note"),
        )
    body = [[name, n, percent(n, sum(counts.values()))] for name, n in counts.most_common()]
    caption = (
        f"{counted(sum(counts.values()), 'run')} with a mechanism; {counted(lucky, 'lucky pass')}."
    )
    return el("div", title + table(["mechanism", "runs", "share"], body, caption=caption))


def _signal_table(rows: Sequence[ScoreRow]) -> str:
    means = signal_means(rows)
    body = [[model, *(_signal_cell(s, v[s]) for s in SIGNALS)] for model, v in means.items()]
    caption = "struct and cov in percent, coh and temp from 0 to 1."
    return table(["model", *SIGNALS], body, caption=caption)


def _score(score: float | None, profile: str | None) -> str:
    """One decimal, or the digits that keep it on its side of the profile's tier thresholds
    (46.99 for a pass Lucky below 47, not 47.0)."""
    from agentlens.process.profiles import PROFILES
    from agentlens.process.tiers import shown_score

    config = PROFILES.get(profile or "")
    if score is None or config is None:
        return fmt(score)
    return shown_score(score, config)


def _signal_cell(signal: str, value: float | None) -> object:
    if value is None:
        return None
    return round(value, 1) if signal in ("struct", "cov") else Cell(f"{value:.3f}", class_="num")


def trajectory_table(rows: Sequence[ScoreRow], profile: str | None = None) -> str:
    head = ["trajectory", "task", "model", "outcome", "score", "tier", "mechanism", "waste"]
    body = [
        [_trajectory_cell(r), r.task_id, r.model, _outcome(r),
         Cell(_score(r.score, profile), title=r.score_reason, class_="num"), Cell(r.tier, title=r.tier_reason, class_=f"tier-{r.tier}"),
         Cell(r.mechanism, title=r.mechanism_reason), r.waste]
        for r in sorted(rows, key=lambda r: (r.in_sample, -(r.score or 0), r.trajectory_id))
    ]  # fmt: skip
    apart = ", in-sample donors last" if any(r.in_sample for r in rows) else ""
    return table(
        head,
        body,
        caption=f"Sorted by score{apart}; hover a score, tier or mechanism for its reason.",
        class_="runs",
    )


def _trajectory_cell(row: ScoreRow) -> object:
    if not row.in_sample:
        return row.trajectory_id
    return Cell(f"{row.trajectory_id} (in-sample)", title=IN_SAMPLE_TITLE, class_="in-sample")
