"""Testing comparisons of spec §11.2 from `agentlens verify` results: per trajectory, whether its
test run produced a result (a *runnable* suite), the passed-tests fraction and the line coverage
(0 when not measured). Run 1 is the anchor.

* runnable test runs: Fisher exact on the counts, N = the larger number of trajectories,
  ratio of the counts, warn outside [0.8, 1.3], alert outside [0.7, 1.4];
* passed-tests fraction and coverage: Mann–Whitney U over the per-trajectory values, ratio of
  the averages, warn outside [0.9, 1.2], alert outside [0.8, 1.3];
* non-null coverage: the same over the non-zero coverage values only.

The released evaluator counts a run as runnable only when it also reports coverage; here a test
run that produced counts is runnable, so suites without coverage measurement still compare."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentlens.reviews.compare import Check, fisher, mann_whitney, ratio_check

TEST_VERIFIER = "RunTestsVerifier"


@dataclass(frozen=True)
class SuiteMetrics:
    runnable: int
    passed_fraction: float
    coverage: float


def suite_metrics(result: Mapping[str, Any]) -> SuiteMetrics | None:
    """One scenario result's test metrics; None if the scenario has no test verifier."""
    runs = [v for v in result["verifier_results"] if v["type"] == TEST_VERIFIER]
    if not runs:
        return None
    for run in runs:
        metrics = run.get("metrics") or {}
        if run["status"] != "error" and "tests" in metrics:
            tests, passed = metrics["tests"], metrics.get("passed", 0)
            coverage = float(metrics.get("coverage_percent") or 0.0)
            return SuiteMetrics(1, passed / tests if tests else 0.0, coverage)
    return SuiteMetrics(0, 0.0, 0.0)


def run_suite_metrics(results: Iterable[Mapping[str, Any]]) -> list[SuiteMetrics]:
    return [m for m in map(suite_metrics, results) if m is not None]


def testing_checks(m1: list[SuiteMetrics], m2: list[SuiteMetrics]) -> list[Check]:
    """The four testing rows, or none when either run has no test verifier results."""
    if not m1 or not m2:
        return []
    s1, s2 = sum(m.runnable for m in m1), sum(m.runnable for m in m2)
    runnable = ratio_check(
        "testing: runnable test runs",
        "Fisher exact",
        s1,
        s2,
        (0.8, 1.3),
        (0.7, 1.4),
        fisher(s1, s2, max(len(m1), len(m2))),
    )
    out = [runnable]
    for label, attr in (("passed-tests fraction", "passed_fraction"), ("coverage", "coverage")):
        x, y = [getattr(m, attr) for m in m1], [getattr(m, attr) for m in m2]
        out.append(_mean_check(f"testing: {label}", x, y))
    x = [m.coverage for m in m1 if m.coverage]
    y = [m.coverage for m in m2 if m.coverage]
    out.append(_mean_check("testing: non-null coverage", x, y))
    return out


def _mean_check(name: str, x: list[float], y: list[float]) -> Check:
    mean_x = sum(x) / len(x) if x else None
    mean_y = sum(y) / len(y) if y else None
    return ratio_check(
        name, "Mann-Whitney U", mean_x, mean_y, (0.9, 1.2), (0.8, 1.3), mann_whitney(x, y)
    )
