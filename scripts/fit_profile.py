"""Fit the `calibrated` profile on ../shared/data ONLY and report its validity (docs/validity.md).

    python scripts/fit_profile.py            # fit, print the report (about 20 s)
    python scripts/fit_profile.py --write    # ... and rewrite src/agentlens/process/calibrated_fit.py
    python scripts/fit_profile.py --transfer # ... plus the fixed profile on SWE-agent Java / mini

Data: the AgentLens-Bench dev tasks in $AGENTLENS_DATA (default ../shared/data), AgentLens-Bench
protocol (k = 5 donors per task, one random.Random(42) over the sorted tasks, donors excluded),
as `agentlens cohort --protocol agentlens-bench` does. Never run on the held-out tasks.

Model: L2-regularised (ridge) logistic regression of pass/fail on ALL the standardised process
signals in `agentlens.process.calibrated.FEATURES` (no outcome term, no term selection: choosing
terms on 8 tasks was the unstable part, docs/validity.md), the penalty from `PENALTIES` by
leave-task-out CV. The reported AUROC is NESTED: for each held-out task, penalty, fit and boundary
are redone on the other tasks only. The final constants come from the same procedure on all tasks;
the tier boundary and the Ideal threshold from the final model's leave-task-out scores (max
balanced accuracy; ≤ `IDEAL_FAIL_RATE` of failing runs).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agentlens.formats.stream import read_paths
from agentlens.process.calibrated import FEATURES, reference_baseline
from agentlens.process.donor_baseline import attach_baseline
from agentlens.process.profiles import CALIBRATED, Profile, Term
from agentlens.process.protocols import score_splits, split_cohort
from agentlens.process.pta import build_reference
from agentlens.process.score import score_trajectory
from agentlens.process.validity import (
    auroc,
    balanced_accuracy,
    best_boundary,
    rare_among_failures,
    task_bootstrap,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("AGENTLENS_DATA", ROOT.parent / "shared" / "data"))
DEV = DATA / "agentlens-bench-dev" / "trajectories"
CONSTANTS = ROOT / "src" / "agentlens" / "process" / "calibrated_fit.py"
PENALTIES = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0)
IDEAL_FAIL_RATE = 0.05
NAMES: tuple[Profile, ...] = ("calibrated", "paper", "sdk-compat")


@dataclass
class Runs:
    """One row per scored run: its task, outcome and every candidate signal."""

    tasks: np.ndarray
    passed: np.ndarray
    x: np.ndarray
    ids: list[str]


def dev_runs(tasks: Sequence[str] | None = None) -> tuple[Runs, list[float]]:
    """Score the dev tasks (AgentLens-Bench protocol) under `calibrated`; also the donors' mean
    baselines (the fallback for references read from files)."""
    trajs = read_paths([DEV / t for t in tasks] if tasks else [DEV]).trajectories
    rows, ids, baselines = [], [], []
    for split in split_cohort(trajs, "agentlens-bench", k=5, seed=42):
        reference = build_reference(split.donors, CALIBRATED)
        attach_baseline(reference, split.donors, CALIBRATED)
        b = reference_baseline(reference)
        baselines.append([b.f1, b.cov, b.n_states])
        for traj in split.scored:
            res = score_trajectory(traj, reference, CALIBRATED)
            rows.append(
                (split.task_id, res.outcome == "passed", [res.signals[f].value for f in FEATURES])
            )
            ids.append(res.trajectory_id)
    runs = Runs(
        np.array([r[0] for r in rows]), np.array([r[1] for r in rows]),
        np.array([r[2] for r in rows], float), ids,
    )  # fmt: skip
    return runs, [float(v) for v in np.mean(baselines, axis=0)]


def fit(x: np.ndarray, y: np.ndarray, penalty: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Newton-Raphson on the L2-penalised log-likelihood of standardised x (intercept free):
    (means, sds, [intercept, weights…])."""
    mean, sd = x.mean(0), x.std(0)
    sd[sd == 0] = 1.0
    z = np.c_[np.ones(len(x)), (x - mean) / sd]
    w = np.zeros(z.shape[1])
    ridge = np.eye(z.shape[1]) * penalty
    ridge[0, 0] = 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-z @ w))
        step = np.linalg.solve(
            (z * (p * (1 - p))[:, None]).T @ z + ridge, z.T @ (p - y) + ridge @ w
        )
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return mean, sd, w


def logit(model: tuple[np.ndarray, np.ndarray, np.ndarray], x: np.ndarray) -> np.ndarray:
    mean, sd, w = model
    return np.asarray(np.c_[np.ones(len(x)), (x - mean) / sd] @ w)


def loto(x: np.ndarray, y: np.ndarray, tasks: np.ndarray, penalty: float) -> np.ndarray:
    """Leave-task-out logits: each task's runs scored by a model fitted without that task."""
    out = np.zeros(len(y))
    for task in np.unique(tasks):
        held = tasks == task
        out[held] = logit(fit(x[~held], y[~held], penalty), x[held])
    return out


def loglik(z: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(1 / (1 + np.exp(-z)), 1e-9, 1 - 1e-9)
    return float(np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def choose_penalty(x: np.ndarray, y: np.ndarray, tasks: np.ndarray) -> float:
    """The penalty with the best leave-task-out log-likelihood (ties: the first, the smaller)."""
    return max(PENALTIES, key=lambda lam: loglik(loto(x, y, tasks, lam), y))


def percent(z: np.ndarray) -> np.ndarray:
    return np.asarray(100 / (1 + np.exp(-z)))


def nested(runs: Runs) -> tuple[np.ndarray, np.ndarray]:
    """Nested leave-task-out scores (0-100) and, per run, the boundary chosen without its task."""
    scores, bounds = np.zeros(len(runs.passed)), np.zeros(len(runs.passed))
    y = runs.passed.astype(float)
    for task in np.unique(runs.tasks):
        held = runs.tasks == task
        x, t = runs.x[~held], runs.tasks[~held]
        penalty = choose_penalty(x, y[~held], t)
        scores[held] = percent(logit(fit(x, y[~held], penalty), runs.x[held]))
        inner = percent(loto(x, y[~held], t, penalty))
        bounds[held] = best_boundary(inner, runs.passed[~held])
    return scores, bounds


@dataclass(frozen=True)
class Fitted:
    terms: tuple[Term, ...]
    intercept: float
    penalty: float
    boundary: float
    ideal_min: float
    oof: np.ndarray


def final(runs: Runs) -> Fitted:
    y = runs.passed.astype(float)
    penalty = choose_penalty(runs.x, y, runs.tasks)
    mean, sd, w = fit(runs.x, y, penalty)
    terms = tuple(
        Term(name, round(float(w[i + 1]), 4), round(float(mean[i]), 4), round(float(sd[i]), 4))
        for i, name in enumerate(FEATURES)
    )
    oof = percent(loto(runs.x, y, runs.tasks, penalty))
    return Fitted(
        terms, round(float(w[0]), 4), penalty, best_boundary(oof, runs.passed),
        rare_among_failures(oof, runs.passed, IDEAL_FAIL_RATE), oof,
    )  # fmt: skip


def shares(scores: np.ndarray, passed: np.ndarray, boundary: float, ideal: float) -> str:
    p, f = scores[passed], scores[~passed]
    return (
        f"Ideal {100 * (p >= ideal).mean():.1f} %, Lucky {100 * (p < boundary).mean():.1f} % of passes; "
        f"Partial-fail {100 * (f >= boundary).mean():.1f} % of failures"
    )


def row(name: str, scores: np.ndarray, runs: Runs, boundary: float, note: str) -> str:
    low, high = task_bootstrap(scores, runs.passed, runs.tasks)
    if np.isnan(boundary):
        return f"| {name} | {auroc(scores, runs.passed):.3f} [{low:.3f}, {high:.3f}] | – | – | {note} |"
    ba = balanced_accuracy(scores, runs.passed, boundary)
    ba_low, ba_high = task_bootstrap(scores, runs.passed, runs.tasks, "ba", boundary=boundary)
    return (
        f"| {name} | {auroc(scores, runs.passed):.3f} [{low:.3f}, {high:.3f}] | {boundary:g} | "
        f"{ba:.3f} [{ba_low:.3f}, {ba_high:.3f}] | {note} |"
    )


def released(runs: Runs) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Eq. 1 (`paper`) and the released score without its outcome term (`sdk-compat`), per run in
    `runs` order, with the tier each profile gave."""
    trajs = read_paths([DEV]).trajectories
    splits = split_cohort(trajs, "agentlens-bench", k=5, seed=42)
    order = {rid: i for i, rid in enumerate(runs.ids)}
    found = {}
    for name in ("paper", "sdk-compat"):
        results = [r for r in score_splits(splits, name) if r.trajectory_id in order]
        results.sort(key=lambda r: order[r.trajectory_id])
        found[name] = (
            np.array([r.score - r.outcome_term for r in results]),
            np.array([r.tier or "" for r in results]),
        )
    return found


def report(runs: Runs, fitted: Fitted) -> str:
    scores, bounds = nested(runs)
    nested_ba = float(np.mean([(scores[runs.passed] >= bounds[runs.passed]).mean(),
                               (scores[~runs.passed] < bounds[~runs.passed]).mean()]))  # fmt: skip
    lines = [
        f"{len(runs.passed)} runs ({int(runs.passed.sum())} pass, {int((~runs.passed).sum())} fail) "
        f"in {len(set(runs.tasks))} tasks; CIs: 2000 task-level bootstrap resamples, seed 0",
        "",
        "| profile | AUROC [95 % CI] | boundary | balanced accuracy [95 % CI] | tiers |",
        "|---|---|---|---|---|",
        row("calibrated, nested LTO (penalty + fit without the task)", scores, runs,
            float("nan"), f"boundary chosen without the task: balanced accuracy {nested_ba:.3f}"),
        row("calibrated, final model, LTO fit", fitted.oof, runs, fitted.boundary,
            shares(fitted.oof, runs.passed, fitted.boundary, fitted.ideal_min)),
    ]  # fmt: skip
    for name, (values, tiers) in released(runs).items():
        boundary = 47.0 if name == "paper" else 40.0
        ideal = np.mean(tiers[runs.passed] == "ideal") * 100
        lucky = np.mean(tiers[runs.passed] == "lucky") * 100
        note = f"Ideal {ideal:.1f} %, Lucky {lucky:.1f} % of passes (profile's own tiers)"
        lines.append(row(f"{name} (process only)", values, runs, boundary, note))
    return "\n".join(lines)


def constants_text(fitted: Fitted, baseline: list[float], n_runs: int) -> str:
    terms = "\n".join(f'    ("{t.signal}", {t.weight}, {t.mean}, {t.sd}),' for t in fitted.terms)
    return f'''"""Constants of the `calibrated` profile. GENERATED by `python scripts/fit_profile.py --write`
from ../shared/data/agentlens-bench-dev ({n_runs} runs scored under the AgentLens-Bench protocol,
k = 5, seed 42): do not edit by hand, re-run the script. TERMS: (signal, weight, mean, sd), the
weight of (signal − mean)/sd in the logit; L2 penalty {fitted.penalty:g} chosen leave-task-out."""

TERMS: tuple[tuple[str, float, float, float], ...] = (
{terms}
)
INTERCEPT = {fitted.intercept}
# Tiers: BOUNDARY maximises the balanced accuracy of the leave-task-out scores; at most
# {IDEAL_FAIL_RATE:.0%} of the failing runs reach IDEAL_MIN.
BOUNDARY = {fitted.boundary}
IDEAL_MIN = {fitted.ideal_min}
# The donors' mean baseline over the dev tasks: used for a reference that keeps no donor runs
BASELINE_F1 = {baseline[0]:.4f}
BASELINE_COV = {baseline[1]:.4f}
BASELINE_N = {baseline[2]:.1f}
BASELINE_REASON = "dev-task mean; this reference keeps no donor runs"
'''


def transfer() -> str:
    from agentlens.process.protocols import RunFailure, score_tasks

    lines = [
        "",
        "| data | profile | runs (pass/fail) | AUROC | Ideal % | Lucky % of passes |",
        "|---|---|---|---|---|---|",
    ]
    for folder in ("swe-agent-java", "mini-swe-agent-swebv"):
        trajs = read_paths([DATA / folder]).trajectories
        splits = split_cohort(trajs, "leave-one-out")
        for name in NAMES:
            results = [
                r
                for o in score_tasks(splits, name)
                for r in o.value or ()
                if not isinstance(r, RunFailure)
            ]
            known = [r for r in results if r.outcome in ("passed", "failed")]
            y = np.array([r.outcome == "passed" for r in known], bool)
            s = np.array([r.score - r.outcome_term for r in known])
            tiers = np.array([r.tier for r in known])
            n_p = int(y.sum())
            ideal = 100 * np.mean(tiers[y] == "ideal") if n_p else float("nan")
            lucky = 100 * np.mean(tiers[y] == "lucky") if n_p else float("nan")
            lines.append(f"| {folder} | {name} | {len(known)} ({n_p}/{len(known) - n_p}) | "
                         f"{auroc(s, y):.3f} | {ideal:.1f} | {lucky:.1f} |")  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {CONSTANTS.name}")
    parser.add_argument("--transfer", action="store_true", help="also SWE-agent Java / mini")
    args = parser.parse_args(argv)
    if args.write and args.transfer:
        parser.error("--transfer scores with the committed constants: run it after --write")
    runs, baseline = dev_runs()
    fitted = final(runs)
    print(constants_text(fitted, baseline, len(runs.passed)))
    print(report(runs, fitted))
    if args.transfer:
        print(transfer())
    if args.write:
        CONSTANTS.write_text(constants_text(fitted, baseline, len(runs.passed)), encoding="utf-8")
        print(f"wrote {CONSTANTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
