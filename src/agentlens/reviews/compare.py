"""Run-vs-run regression tests (spec §11.2). Run 1 is the reference (anchor), run 2 the new run.

Telemetry comparisons use two-sided Mann–Whitney U on per-trajectory samples (p rounded to 4
decimals; 1.0 if a sample is empty) and a ratio `(v2 + 1e-9) / (v1 + 1e-9)` checked against a
warning and an alert range; any p < 0.05 sets both flags. Formal passes use a two-sided Fisher
exact test on `[[s1, N − s1], [s2, N − s2]]` with N = run 1's trajectory count (p rounded to 5).
Per-tool success rates and termination reasons follow the spec's rules. The upper per-tool alert
bound is `1.2 / alert` by default; the `released` profile keeps the released code's `1.2 / warn`
(decision §13.10), which makes every rate rise above the warning bound an alert too. Process metrics (issue 3: Lucky
rate, verification coverage, waste) use the same tests with ranges of our own (not in the spec):
warn [0.8, 1.25], alert [0.67, 1.5]; their samples come from references built from both runs'
passing runs pooled, each run scored leave-one-out (`reviews.process_evidence`), so neither run
is scored against a reference made from itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from scipy import stats

from agentlens.list_text import counted
from agentlens.reviews.telemetry import RunTelemetry

Range = tuple[float, float]
CompareProfile = Literal["default", "released"]
"""`released` reproduces the released evaluator exactly; `default` differs only in the upper
per-tool alert bound (1.2 / alert instead of 1.2 / warn, decision §13.10)."""


@dataclass
class Check:
    name: str
    test: str
    v1: float | None
    v2: float | None
    p_value: float | None = None
    ratio: float | None = None
    warning: bool = False
    alert: bool = False
    reason: str = ""
    detail: str = ""
    """The full arithmetic when `reason` is its short form: tables show it below, not in a cell."""


@dataclass
class RunSummary:
    """What `compare` knows about one run; everything but telemetry is optional."""

    name: str
    telemetry: RunTelemetry
    formal: list[int] | None = None
    qi: float | None = None
    qi_na: str | None = None
    """Why the QI is n/a although reviews were given (a component with no scored item)."""
    sxs_flags: dict[str, dict[str, Any]] | None = None
    process: dict[str, list[float]] | None = (
        None  # lucky (0/1 over passing runs), v_coverage, waste
    )


@dataclass
class Comparison:
    run_1: str
    run_2: str
    checks: list[Check] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if any(c.alert for c in self.checks):
            return 2
        return 1 if any(c.warning for c in self.checks) else 0

    def to_dict(self) -> dict[str, Any]:
        status = {0: "ok", 1: "warning", 2: "alert"}[self.exit_code]
        return {
            "run_1": self.run_1,
            "run_2": self.run_2,
            "status": status,
            "exit_code": self.exit_code,
            "checks": [asdict(c) for c in self.checks],
        }


def mann_whitney(x: Sequence[float], y: Sequence[float]) -> float:
    if not x or not y:
        return 1.0
    return round(float(stats.mannwhitneyu(x, y, alternative="two-sided").pvalue), 4)


def fisher(s1: int, s2: int, n: int) -> float:
    table = [[s1, max(n - s1, 0)], [s2, max(n - s2, 0)]]
    return round(float(stats.fisher_exact(table, alternative="two-sided")[1]), 5)


def shown_ratio(ratio: float, v1: float) -> str:
    """The ratio as a reason prints it: `750000001.000` for 0.75 against 0 said only that the
    spec's 1e-9 keeps the division finite."""
    if v1 == 0 and ratio > 1:
        return f"{ratio:.3g} (run 1 is 0)"
    return f"{ratio:.3f}"


def ratio_check(
    name: str,
    test: str,
    v1: float | None,
    v2: float | None,
    warn: Range,
    alert: Range,
    p: float | None = None,
) -> Check:
    if v1 is None and v2 is None:
        return Check(name, test, v1, v2, p, reason="recorded in neither run")
    if v1 is None or v2 is None:  # a gate must not read "ok" for what it could not compare
        only = f"recorded in run {1 if v2 is None else 2} only: nothing to compare it with"
        return Check(name, test, v1, v2, p, warning=True, reason=only)
    ratio = (v2 + 1e-9) / (v1 + 1e-9)
    warning = not warn[0] <= ratio <= warn[1]
    alerting = not alert[0] <= ratio <= alert[1]
    significant = p is not None and p < 0.05
    reason = (
        f"ratio {shown_ratio(ratio, v1)} (warn outside {list(warn)}, alert outside {list(alert)})"
    )
    if p is not None:
        reason += f"; {test} p = {p}" + (" < 0.05" if significant else "")
    return Check(
        name,
        test,
        v1,
        v2,
        p,
        round(ratio, 4),
        warning or significant,
        alerting or significant,
        reason,
    )


def _vals(xs: Sequence[float | None]) -> list[float]:
    return [x for x in xs if x is not None]


def telemetry_checks(
    r1: RunTelemetry, r2: RunTelemetry, profile: CompareProfile = "default"
) -> list[Check]:
    t1, t2 = r1.trajectories, r2.trajectories
    out = []
    specs: list[tuple[str, str, Range, Range]] = [
        ("tool-call count", "tool_calls", (0.8, 1.3), (0.5, 2.0)),
        ("generation tokens", "completion_tokens", (0.8, 1.3), (0.5, 2.0)),
        ("price", "cost", (0.9, 1.2), (0.66, 1.5)),
        ("time", "time_s", (0.8, 1.3), (0.66, 1.5)),
    ]
    cached = _cached_note(r1, r2)
    for name, attr, warn, alert in specs:
        x, y = _vals([getattr(t, attr) for t in t1]), _vals([getattr(t, attr) for t in t2])
        if attr == "time_s" and cached:
            out.append(Check(name, "none", None, None, None, warning=True, reason=cached))
            continue
        p = mann_whitney(x, y)
        out.append(
            ratio_check(
                name, "Mann-Whitney U", sum(x) if x else None, sum(y) if y else None, warn, alert, p
            )
        )
    x, y = _vals([t.cache_hit_mean for t in t1]), _vals([t.cache_hit_mean for t in t2])
    out.append(
        ratio_check(
            "cache-hit ratio",
            "Mann-Whitney U",
            _mean(x),
            _mean(y),
            (0.9, 1.4),
            (0.7, 2.0),
            mann_whitney(x, y),
        )
    )
    x, y = _vals([t.throughput for t in t1]), _vals([t.throughput for t in t2])
    out.append(
        Check("throughput", "none", None, None, None, warning=True, reason=cached)
        if cached
        else ratio_check(
            "throughput",
            "Mann-Whitney U",
            _run_throughput(r1),
            _run_throughput(r2),
            (0.8, 1.3),
            (0.66, 1.5),
            mann_whitney(x, y),
        )
    )
    out.append(
        ratio_check(
            "tool calls in parallel",
            "none",
            r1.parallel_mean(),
            r2.parallel_mean(),
            (0.9, 1.4),
            (0.7, 3.0),
        )
    )
    out.extend(tool_success_checks(r1.tool_success(), r2.tool_success(), profile))
    out.append(termination_check(r1, r2))
    return out


def _cached_note(r1: RunTelemetry, r2: RunTelemetry) -> str | None:
    """Why time is not compared when a run's model replies came from the response cache (a
    rerun): they took no model time, and a ratio would flag a speed-up nobody had."""
    parts = []
    for n, run in enumerate((r1, r2), 1):
        hit = [t.cached_turns for t in run.trajectories if t.cached_turns]
        if hit:
            parts.append(
                f"run {n}: {sum(hit)} model replies in {len(hit)} of {len(run.trajectories)} "
                "trajectories served from the response cache"
            )
    if not parts:
        return None
    return "; ".join(parts) + ": they took no model time, so time is not compared"


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _run_throughput(run: RunTelemetry) -> float | None:
    timed = [(t.completion_tokens, t.time_s) for t in run.trajectories]
    known = [(n, s) for n, s in timed if n is not None and s is not None]
    times = sum(s for _, s in known)
    return sum(n for n, _ in known) / times if times else None


def tool_success_checks(
    s1: dict[str, str], s2: dict[str, str], profile: CompareProfile = "default"
) -> list[Check]:
    out = []
    for tool in sorted(set(s1) | set(s2)):
        ok1, n1 = map(int, s1.get(tool, "0/0").split("/"))
        ok2, n2 = map(int, s2.get(tool, "0/0").split("/"))
        # a run that never called the tool has no rate: 0 would read as every call failing
        r1, r2 = ok1 / n1 if n1 else None, ok2 / n2 if n2 else None
        check = Check(f"tool success: {tool}", "rate", r1, r2, reason=f"{ok1}/{n1} vs {ok2}/{n2}")
        if n2 <= 3:
            check.reason += "; ≤ 3 calls in run 2: no flags"
            out.append(check)
            continue
        warn, alert = (0.9, 0.8) if n2 >= 20 else (0.8, 0.6) if n2 >= 10 else (0.7, 0.4)
        if r1 is not None and r2 is not None:
            rel = r2 / (r1 + 1e-9)
            upper_alert = 1.2 / (warn if profile == "released" else alert)
            check.ratio = round(rel, 4)
            check.warning = rel < warn or rel > 1.2 / warn
            check.alert = rel < alert or rel > upper_alert
            check.reason += (
                f"; rel {shown_ratio(rel, r1)}: warn outside [{warn}, {1.2 / warn:.3f}], "
                f"alert outside [{alert}, {upper_alert:.3f}]"
            )
            count_ratio = n2 / n1
            if not 0.7 <= count_ratio <= 1.4 and abs(n2 - n1) >= 12:
                check.warning = True
                check.reason += f"; call count ratio {count_ratio:.2f} outside [0.7, 1.4]"
        out.append(check)
    return out


def termination_check(r1: RunTelemetry, r2: RunTelemetry) -> Check:
    c1 = r1.to_dict()["termination_reason"]
    c2 = r2.to_dict()["termination_reason"]
    reasons = set(c1) | set(c2)
    union = sum(max(c1.get(k, 0), c2.get(k, 0)) for k in reasons)
    diff = sum(abs(c1.get(k, 0) - c2.get(k, 0)) for k in reasons)
    warning, alert = diff >= union / 5 + 2, diff >= union / 4 + 3
    common = {k: min(c1.get(k, 0), c2.get(k, 0)) for k in sorted(reasons)}
    extra_1 = {k: c1[k] - common[k] for k in sorted(c1) if c1[k] > common[k]}
    extra_2 = {k: c2[k] - common[k] for k in sorted(c2) if c2[k] > common[k]}
    reason = (
        f"diff {diff} vs union {union}: warn if ≥ {union / 5 + 2:.1f}, alert if ≥ "
        f"{union / 4 + 3:.2f}; both: {_counts_text(_nonzero(common))}; only run 1: "
        f"{_counts_text(extra_1)}; only run 2: {_counts_text(extra_2)}"
    )
    # union and diff are no run's values: under "run 1" / "run 2" they read as counts of each
    return Check(
        "termination reasons", "set difference", None, None, None, None, warning, alert, reason
    )


def _counts_text(counts: dict[str, int]) -> str:
    """`done 4, timeout 2`, or `none`: what a reader scans, not a Python dict."""
    return ", ".join(f"{reason} {n}" for reason, n in counts.items()) or "none"


def _nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if v}


def formal_check(f1: list[int], f2: list[int]) -> Check:
    s1, s2, n = sum(f1), sum(f2), len(f1)
    p = fisher(s1, s2, n)
    check = ratio_check("formal verification", "Fisher exact", s1, s2, (0.8, 1.3), (0.7, 1.4), p)
    check.reason = f"{s1}/{len(f1)} vs {s2}/{len(f2)} passed; " + check.reason
    return check


def process_checks(p1: dict[str, list[float]], p2: dict[str, list[float]]) -> list[Check]:
    out = []
    lucky1, lucky2 = p1.get("lucky", []), p2.get("lucky", [])
    if lucky1 and lucky2:
        p = fisher(int(sum(lucky1)), int(sum(lucky2)), max(len(lucky1), len(lucky2)))
        out.append(
            ratio_check(
                "process: Lucky rate",
                "Fisher exact",
                _mean(lucky1),
                _mean(lucky2),
                (0.8, 1.25),
                (0.67, 1.5),
                p,
            )
        )
    for key, label in (("v_coverage", "verification coverage"), ("waste", "waste severity")):
        x, y = p1.get(key, []), p2.get(key, [])
        out.append(
            ratio_check(
                f"process: {label}",
                "Mann-Whitney U",
                _mean(x),
                _mean(y),
                (0.8, 1.25),
                (0.67, 1.5),
                mann_whitney(x, y),
            )
        )
    return out


def sxs_reason(flags: dict[str, Any]) -> str:
    """The score flags' reason, then the trinomial test's (reported beside them, not flagged)."""
    reason = str(flags.get("reason", ""))
    trinomial = flags.get("trinomial")
    return f"{reason}; trinomial test: {trinomial['reason']}" if trinomial else reason


def sxs_check(dim: str, flags: dict[str, Any]) -> Check:
    """One SxS dimension's flags; with no scored comparison its mean (0, p 1) is no evidence of
    no change, so it is n/a with a warning."""
    name, test = f"SxS: {dim}", "sign-flip permutation"
    if flags.get("scored_tasks") == 0:
        reason = (
            f"no scored comparison (0 of {counted(flags.get('tasks') or 0, 'task')}): the mean is n/a; "
            "every judge answer was unscored or failed"
        )
        return Check(name, test, None, None, warning=True, reason=reason)
    return Check(
        name, test, None, flags.get("mean_score"), flags.get("p_value"),
        warning=bool(flags.get("warning")), alert=bool(flags.get("alert")),
        reason=sxs_verdict(flags), detail=sxs_reason(flags),
    )  # fmt: skip


def sxs_verdict(flags: dict[str, Any]) -> str:
    """The flags' inputs in one short line: mean, p and the three parts of spec §8's rule."""
    parts = ("score_warning", "score_alert", "judge_alert")
    said = ", ".join(f"{k.replace('_', ' ')} {'yes' if flags.get(k) else 'no'}" for k in parts)
    verdict = f"mean {_signed(flags.get('mean_score'))}, p = {flags.get('p_value')}: {said}"
    trinomial = flags.get("trinomial")
    if trinomial and trinomial.get("p_value") is not None:
        verdict += f"; trinomial p = {trinomial['p_value']:.3g} (reported only)"
    return verdict


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.4f}"


def qi_check(run_1: RunSummary, run_2: RunSummary) -> Check | None:
    """The QI delta, reported unflagged; when reviews were given but a QI is n/a, why."""
    if run_1.qi is not None and run_2.qi is not None:
        reason = f"QI delta {run_2.qi - run_1.qi:+.2f} (reported, not flagged)"
        return Check("quality index", "delta", run_1.qi, run_2.qi, reason=reason)
    if not (run_1.qi_na or run_2.qi_na):
        return None
    why = _per_run(_qi_shown(run_1), _qi_shown(run_2))
    hint = " (the formal pass rate comes from --a-verify / --b-verify)" if "Formal" in why else ""
    return Check("quality index", "delta", run_1.qi, run_2.qi, reason=f"QI n/a: {why}{hint}")


def _per_run(shown_1: str, shown_2: str) -> str:
    """What each run says, said once when both say it."""
    if shown_1 == shown_2:
        return f"both runs: {shown_1}"
    return f"run 1: {shown_1}; run 2: {shown_2}"


def _qi_shown(run: RunSummary) -> str:
    if run.qi_na:
        return run.qi_na
    return "no reviews given" if run.qi is None else f"QI {run.qi:.2f}"


def compare_runs(
    run_1: RunSummary,
    run_2: RunSummary,
    process_note: str | None = None,
    profile: CompareProfile = "default",
) -> Comparison:
    """All checks; `process_note` (how the process references were made, what was skipped)
    becomes an unflagged `process: references` row before the process checks."""
    checks = telemetry_checks(run_1.telemetry, run_2.telemetry, profile)
    result = Comparison(run_1.name, run_2.name, checks)
    if run_1.formal is not None and run_2.formal is not None:
        result.checks.append(formal_check(run_1.formal, run_2.formal))
    qi_row = qi_check(run_1, run_2)
    if qi_row:
        result.checks.append(qi_row)
    result.checks.extend(sxs_check(dim, flags) for dim, flags in (run_2.sxs_flags or {}).items())
    if run_1.process and run_2.process:
        if process_note:
            result.checks.append(
                Check("process: references", "none", None, None, reason=process_note)
            )
        result.checks.extend(process_checks(run_1.process, run_2.process))
    return result
