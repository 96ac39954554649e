"""Rich tables for a `CohortReport` (used by `agentlens cohort` and the demo)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentlens.list_text import counted
from agentlens.process.cohort import CohortReport, WasteRow
from agentlens.process.curation import CurationRow
from agentlens.process.mechanisms import NAMES
from agentlens.process.validity import (
    PAPER_AUROC,
    PAPER_IDEAL_PERCENT,
    PAPER_LUCKY_PERCENT,
    PAPER_PARTIAL_FAIL_PERCENT,
    Validity,
)

TIER_ORDER = ("ideal", "solid", "lucky", "partial_fail", "off_track")
MECHANISMS = ("C1", "C2", "C3", "C4", "C5")
MODEL_FITS = 15


def print_report(console: Console, report: CohortReport, curation: Sequence[CurationRow]) -> None:
    for table in (
        tier_table(report),
        model_table(report),
        waste_table(
            "Waste prevalence: passing (P) vs failing (F)", "P", "F", report.waste_pass_fail
        ),
        waste_table("Waste prevalence: Ideal (I) vs Lucky (L)", "I", "L", report.waste_ideal_lucky),
        mechanism_table(report),
        mechanism_profile_table(report),
        separation_table(report),
        curation_table(curation),
    ):
        console.print(table)


def tier_table(report: CohortReport) -> Table:
    tiered = sum(report.tiers.values())
    # beside the tiered count, not within it: "19 runs; 2 with no label" read as 2 of the 19
    untiered = report.n_runs - tiered
    unknown = f"; {counted(untiered, 'unlabelled run')} not tiered" if untiered > 0 else ""
    table = Table(
        "tier", "runs", "share of its outcome %", title=f"Tiers ({counted(tiered, 'run')}{unknown})"
    )
    passing = sum(report.tiers.get(t, 0) for t in TIER_ORDER[:3])
    failing = sum(report.tiers.get(t, 0) for t in TIER_ORDER[3:])
    for tier in TIER_ORDER:
        n = report.tiers.get(tier, 0)
        base = passing if tier in TIER_ORDER[:3] else failing
        table.add_row(tier, str(n), f"{100 * n / base:.1f}" if base else "-")
    return table


def model_table(report: CohortReport) -> Table:
    unknown = sum(m.unknown for m in report.models)
    table = Table(
        title="Models: pass rate vs process quality of passing runs",
        caption=f"{counted(unknown, 'run')} with no pass/fail label left out" if unknown else None,
    )
    # cut, two models would read as one; folded only when it cannot fit: in 80 columns the other
    # headers wrap first, so `gemini-2.5-pro` stays on one line, and the numbers leave the model
    # 15 letters (kept whole, a longer name pushed the table's right edge, the Lucky %, off)
    longest = max((len(m.model) for m in report.models), default=5)
    table.add_column("model", overflow="fold", min_width=min(longest, MODEL_FITS))
    for name in ("runs", "pass %", "rank", "mean score (passing)", "rank", "shift", "Lucky %"):
        table.add_column(name, justify="right", max_width=9 if name.startswith("mean") else None)
    for m in report.models:
        table.add_row(
            m.model, str(m.trajectories - m.unknown), _f(m.pass_rate), _rank(m.pass_rank),
            _f(m.mean_score_passing), _rank(m.score_rank),
            "-" if m.rank_shift is None else f"{m.rank_shift:+d}",
            f"{m.lucky_percent:.1f} ({m.lucky})",
        )  # fmt: skip
    return table


def waste_table(title: str, a: str, b: str, rows: list[WasteRow]) -> Table:
    caption = (
        f"prev: % of the {a} or {b} runs with at least one; {b}/{a}: the ratio of the two; "
        "waste: mean wasted steps in the runs that have one"
    )
    table = Table(title=title, caption=caption)
    for name in ("type", f"prev {a} %", f"prev {b} %", f"{b}/{a}", f"waste {a}", f"waste {b}"):
        table.add_column(name, justify="right")
    for w in rows:
        table.add_row(
            w.kind,
            _f(w.prevalence_a),
            _f(w.prevalence_b),
            _f(w.ratio, 2),
            _f(w.waste_a),
            _f(w.waste_b),
        )
    return table


def mechanism_table(report: CohortReport) -> Table:
    """Per model, its Lucky passes by mechanism; the caption names each code, which `score`
    prints by name."""
    key = "; ".join(f"{code} {NAMES[code]}" for code in MECHANISMS)
    title = f"Mechanisms of {_lucky_share(report)}"
    table = Table("model", *MECHANISMS, "total", title=title, caption=key)
    for model, counts in sorted(report.mechanisms.items(), key=lambda kv: -sum(kv[1].values())):
        cells = [str(counts.get(c, 0)) for c in MECHANISMS]
        table.add_row(model, *cells, str(sum(counts.values())))
    return table


def _lucky_share(report: CohortReport) -> str:
    """`4 Lucky Passes (10% of 40 passes)`: what the table classifies, which no cell shows
    (the C1 column's total used to stand here, repeating the table)."""
    lucky = sum(m.lucky for m in report.models)
    passes = sum(m.passing for m in report.models)
    share = f" ({lucky / passes:.0%} of {counted(passes, 'pass')})" if passes else ""
    return counted(lucky, "Lucky Pass") + share


MECHANISM_COLUMNS = (
    "waste: mean wasted steps; sev.: mean waste severity; clean%: % with no waste; "
    "len: mean states; V=0, V>0: runs with no, some verification coverage; "
    "tokens: mean, range: least–most"
)


def mechanism_profile_table(report: CohortReport) -> Table:
    """Paper Tables 13 (waste, length), 17 (verification) and 21 (tokens) per mechanism."""
    table = Table(
        title="Lucky-Pass mechanisms: mean waste, severity, length, V coverage, tokens",
        caption=MECHANISM_COLUMNS,
    )
    # short headers and figures: ten columns must fit an 80-column terminal ("clean" = zero waste)
    for name in ("mech", "runs", "waste", "sev.", "clean%", "len", "V=0", "V>0"):
        table.add_column(name, justify="right")
    for name in ("tokens", "range"):
        table.add_column(name, justify="right")
    for m in report.mechanism_profiles:
        tokens = _tokens(m.mean_tokens) if m.mean_tokens is not None else "-"
        spread = "-"
        if m.min_tokens is not None and m.max_tokens is not None:
            spread = f"{_tokens(m.min_tokens)}–{_tokens(m.max_tokens)}"
        table.add_row(
            m.mechanism, str(m.n), _f(m.mean_waste), _f(m.mean_severity, 2),
            f"{m.zero_waste_percent:.0f}", _f(m.mean_length), str(m.v_zero), str(m.v_positive),
            tokens, spread,
        )  # fmt: skip
    return table


def _tokens(n: float) -> str:
    """586k, 1.2M: in full, a mean and a range did not fit 80 columns and were cut ("586,0…")."""
    if n >= 999_500:
        return f"{n / 1e6:.1f}M"
    return f"{n / 1e3:.0f}k" if n >= 10_000 else f"{n:.0f}"


def separation_table(report: CohortReport) -> Table:
    table = Table(
        "signal", "AUROC", "95% CI", "KS D", "KS p", "pass/fail", title="Pass/fail separation"
    )
    for s in report.separation:
        table.add_row(
            s.signal, _f(s.auroc, 3), f"[{s.ci_low:.3f}, {s.ci_high:.3f}]", _f(s.ks, 3),
            f"{s.ks_p:.2g}", f"{s.n_pass}/{s.n_fail}",
        )  # fmt: skip
    return table


def curation_table(rows: Sequence[CurationRow]) -> Table:
    table = Table(title="Curation (passing runs by descending score)")
    for name in (
        "selection",
        "runs",
        "Ideal %",
        "Lucky %",
        "mean coherence",
        "mean score",
        "min score",
    ):
        table.add_column(name, justify="right")
    for c in rows:
        table.add_row(
            c.selection, str(c.n), _f(c.ideal_percent), _f(c.lucky_percent),
            _f(c.mean_coherence, 3), _f(c.mean_score), _f(c.min_score),
        )  # fmt: skip
    return table


def _rank(rank: int | None) -> str:
    return "-" if rank is None else str(rank)


def _f(value: float, digits: int = 1) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


def validity_table(v: Validity) -> Table:
    """The docs/validity.md row for this profile, on the runs just scored, beside the paper."""
    table = Table(title=f"Validity of {v.profile} on these runs (process only; docs/validity.md)")
    for name in ("figure", "here", "paper's claim"):
        table.add_column(name, justify="right")
    table.add_row(
        "pass/fail AUROC [95 % CI, task bootstrap]",
        _auroc_with_ci(v),
        f"{PAPER_AUROC:.3f}",
    )
    table.add_row(
        f"balanced accuracy at process score {v.boundary:g}",
        f"{v.balanced_accuracy:.3f}",
        "-",
    )
    table.add_row("Ideal % of passes", f"{v.ideal_percent:.1f}", f"{PAPER_IDEAL_PERCENT:.1f}")
    table.add_row("Lucky % of passes", f"{v.lucky_percent:.1f}", f"{PAPER_LUCKY_PERCENT:.1f}")
    table.add_row(
        "Partial-fail % of failures",
        f"{v.partial_fail_percent:.1f}",
        f"{PAPER_PARTIAL_FAIL_PERCENT:.1f}",
    )
    table.add_row("runs pass/fail, tasks", f"{v.n_pass}/{v.n_fail}, {v.n_tasks}", "-")
    notes = [_cuts(v)] if v.lucky_cut is not None else []
    if v.in_fit:
        notes.append(
            f"in-sample: {_fitted_on(v)}, so these figures flatter it; quote its leave-task-out "
            "figures (docs/validity.md)"
        )
    table.caption = "; ".join(notes) or None
    return table


def _auroc_with_ci(v: Validity) -> Text:
    if v.ci_low != v.ci_low:  # NaN: one task gives a task bootstrap nothing to resample
        return Text(f"{v.auroc:.3f} [n/a: {counted(v.n_tasks, 'task')}]")  # never read as markup
    return Text(f"{v.auroc:.3f} [{v.ci_low:.3f}, {v.ci_high:.3f}]")


def _cuts(v: Validity) -> str:
    """Why the Lucky share and the balanced accuracy cut passes at different scores."""
    full = f"{(v.lucky_cut or 0) + v.pass_term:g} − the +{v.pass_term:g} a pass gets"
    return (
        f"a pass is Lucky below process score {v.lucky_cut:g} ({full}), a failure "
        f"Partial-fail from {v.boundary:g}; the balanced "
        f"accuracy cuts every run at {v.boundary:g}, as a cut that moves with the outcome would "
        "score the outcome (docs/validity.md)"
    )


def _fitted_on(v: Validity) -> str:
    if v.n_tasks == 1:
        return f"this task is one {v.profile} was fitted on"
    are = "is one" if v.in_fit == 1 else "are the ones"
    return f"{v.in_fit} of these {v.n_tasks} tasks {are} {v.profile} was fitted on"
