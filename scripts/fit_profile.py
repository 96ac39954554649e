"""Fit the `calibrated` profile on ../shared/data ONLY and report its validity (docs/validity.md).

    python scripts/fit_profile.py            # fit, print the report (about 20 s)
    python scripts/fit_profile.py --write    # ... and rewrite src/agentlens/process/calibrated_fit.py
    python scripts/fit_profile.py --transfer # ... plus the fixed profile on SWE-agent Java / mini

Data: the AgentLens-Bench dev tasks in $AGENTLENS_DATA (default ../shared/data), AgentLens-Bench
protocol (k = 5 donors per task, one random.Random(seed) over the sorted tasks, donors excluded),
as `agentlens cohort --protocol agentlens-bench` does. Never run on the held-out tasks. The fit
stacks the runs as scored under `DRAWS` (five donor draws): which 5 passing runs are the donors
moves every relative signal of a task, and one draw's luck would be fitted as if it were signal.
Figures: the protocol's own draw (seed 42), and the nested AUROC on `EVAL_DRAWS` too.

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
from agentlens.process.composite import outcome_term
from agentlens.process.profiles import CALIBRATED, Profile, Term, get_profile
from agentlens.process.protocols import score_splits, split_cohort
from agentlens.process.reference import build_reference
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
DRAWS = (42, 43, 44, 45, 46)
EVAL_DRAWS = (1, 2, 3, 4, 5)
IDEAL_FAIL_RATE = 0.05
NAMES: tuple[Profile, ...] = ("calibrated", "paper", "sdk-compat")


@dataclass
class Runs:
    """One row per scored run and donor draw: its task, outcome, every candidate signal, draw."""

    tasks: np.ndarray
    passed: np.ndarray
    x: np.ndarray
    ids: list[str]
    draws: np.ndarray

    def of_draw(self, seed: int) -> Runs:
        keep = self.draws == seed
        ids = [i for i, k in zip(self.ids, keep, strict=True) if k]
        return Runs(self.tasks[keep], self.passed[keep], self.x[keep], ids, self.draws[keep])


def dev_runs(seeds: Sequence[int] = DRAWS) -> tuple[Runs, list[float]]:
    """Score the dev tasks (AgentLens-Bench protocol) under `calibrated`, once per donor draw in
    `seeds`; also the donors' mean baselines (the fallback for references read from files)."""
    trajs = read_paths([DEV]).trajectories
    rows, ids, baselines = [], [], []
    for seed in seeds:
        for split in split_cohort(trajs, "agentlens-bench", k=5, seed=seed):
            reference = build_reference(split.donors, CALIBRATED)
            b = reference_baseline(reference)
            baselines.append([b.f1, b.cov, b.n_states])
            for traj in split.scored:
                res = score_trajectory(traj, reference, CALIBRATED)
                signals = [res.signals[f].value for f in FEATURES]
                rows.append((split.task_id, res.outcome == "passed", signals, seed))
                ids.append(res.trajectory_id)
    runs = Runs(
        np.array([r[0] for r in rows]), np.array([r[1] for r in rows]),
        np.array([r[2] for r in rows], float), ids, np.array([r[3] for r in rows]),
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


def nested(train: Runs, test: Runs) -> tuple[np.ndarray, np.ndarray]:
    """Nested leave-task-out scores (0-100) of `test` and, per run, the boundary chosen without
    its task: each task scored by penalty, fit and boundary from the OTHER tasks of `train`."""
    scores, bounds = np.zeros(len(test.passed)), np.zeros(len(test.passed))
    for task in np.unique(test.tasks):
        rest = train.tasks != task
        x, y, t = train.x[rest], train.passed[rest].astype(float), train.tasks[rest]
        penalty = choose_penalty(x, y, t)
        held = test.tasks == task
        scores[held] = percent(logit(fit(x, y, penalty), test.x[held]))
        bounds[held] = best_boundary(percent(loto(x, y, t, penalty)), train.passed[rest])
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
    """The validity table on the protocol's own donor draw (seed 42)."""
    own = runs.of_draw(42)
    scores, bounds = nested(runs, own)
    ok = own.passed
    nested_ba = float(
        np.mean([(scores[ok] >= bounds[ok]).mean(), (scores[~ok] < bounds[~ok]).mean()])
    )
    oof = fitted.oof[runs.draws == 42]
    lines = [
        f"{len(ok)} runs ({int(ok.sum())} pass, {int((~ok).sum())} fail) in {len(set(own.tasks))} "
        f"tasks, donor draw seed 42 (the fit stacks draws {DRAWS}: {len(runs.passed)} rows); "
        "CIs: 2000 task-level bootstrap resamples, seed 0",
        "",
        "| profile | AUROC [95 % CI] | boundary | balanced accuracy [95 % CI] | tiers |",
        "|---|---|---|---|---|",
        row("calibrated, nested LTO (penalty + fit without the task)", scores, own,
            float("nan"), f"boundary chosen without the task: balanced accuracy {nested_ba:.3f}"),
        row("calibrated, final model, LTO fit", oof, own, fitted.boundary,
            shares(oof, ok, fitted.boundary, fitted.ideal_min)),
    ]  # fmt: skip
    for name, (values, tiers) in released(own).items():
        config = get_profile(name)
        boundary = config.partial_fail_min
        ideal = np.mean(tiers[ok] == "ideal") * 100
        lucky = np.mean(tiers[ok] == "lucky") * 100
        note = f"Ideal {ideal:.1f} %, Lucky {lucky:.1f} % of passes (profile's own tiers)"
        if (cut := config.lucky_below - outcome_term(config, "passed")) != boundary:
            note += f"; a pass is Lucky below process score {cut:g}"
        lines.append(row(f"{name} (process only)", values, own, boundary, note))
    return "\n".join([*lines, "", by_draw(runs, scores, nested_ba)])


def by_draw(runs: Runs, own_scores: np.ndarray, own_ba: float) -> str:
    """Nested AUROC and balanced accuracy when the held-out task's donors are drawn otherwise
    (`EVAL_DRAWS`): the spread is part of the uncertainty that the task bootstrap misses."""
    found = [(42, auroc(own_scores, runs.of_draw(42).passed), own_ba)]
    for seed in EVAL_DRAWS:
        test = dev_runs((seed,))[0]
        scores, bounds = nested(runs, test)
        ok = test.passed
        ba = float(np.mean([(scores[ok] >= bounds[ok]).mean(), (scores[~ok] < bounds[~ok]).mean()]))
        found.append((seed, auroc(scores, ok), ba))
    cells = ", ".join(f"{seed}: {a:.3f} / {ba:.3f}" for seed, a, ba in found)
    a_mean, ba_mean = np.mean([f[1] for f in found]), np.mean([f[2] for f in found])
    return (
        f"nested AUROC / balanced accuracy by donor draw (seed: AUROC / BA): {cells}; "
        f"mean {a_mean:.3f} / {ba_mean:.3f}, range {min(f[1] for f in found):.3f}–"
        f"{max(f[1] for f in found):.3f}"
    )


def constants_text(fitted: Fitted, baseline: list[float], runs: Runs) -> str:
    n_runs = len(runs.passed)
    tasks = "\n".join(f'    "{task}",' for task in sorted(set(runs.tasks.tolist())))
    terms = "\n".join(f'    ("{t.signal}", {t.weight}, {t.mean}, {t.sd}),' for t in fitted.terms)
    return f'''"""Constants of the `calibrated` profile. GENERATED by `python scripts/fit_profile.py --write`
from ../shared/data/agentlens-bench-dev (its runs scored under the AgentLens-Bench protocol, k = 5,
donor draws {DRAWS[0]}–{DRAWS[-1]} stacked: {n_runs} rows); do not edit by hand, re-run the script.
TERMS: (signal, weight, mean, sd), the weight of (signal − mean)/sd in the logit; L2 penalty
{fitted.penalty:g} chosen leave-task-out."""

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
# The tasks whose runs were fitted on: figures over their runs are in-sample
FIT_TASKS: tuple[str, ...] = (
{tasks}
)
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


def terms_table(fitted: Fitted) -> str:
    """The terms as docs/validity.md shows them (weights per sd, rounded as the reason prints)."""
    rows = [
        f"| `{t.signal}` | {t.weight:+.2f} | {t.mean:.3f} | {t.sd:.3f} |".replace("-", "−")
        for t in fitted.terms
    ]
    head = "| term | weight | mean | sd |\n|---|---|---|---|"
    return "\n".join([head, *rows, f"| intercept | {fitted.intercept:+.2f} | | |", ""])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {CONSTANTS.name}")
    parser.add_argument("--transfer", action="store_true", help="also SWE-agent Java / mini")
    args = parser.parse_args(argv)
    if args.write and args.transfer:
        parser.error("--transfer scores with the committed constants: run it after --write")
    runs, baseline = dev_runs()
    fitted = final(runs)
    print(constants_text(fitted, baseline, runs))
    print(terms_table(fitted))
    print(report(runs, fitted))
    if args.transfer:
        print(transfer())
    if args.write:
        CONSTANTS.write_text(constants_text(fitted, baseline, runs), encoding="utf-8")
        print(f"wrote {CONSTANTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
