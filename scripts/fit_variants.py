"""Every fitting variant tried for the `calibrated` profile, each with its NESTED leave-task-out
AUROC on the dev tasks (docs/validity.md, "Variants tried"). Reproduces the variant log; the
product uses V11 (`scripts/fit_profile.py`). About 1 minute; `--draws` (3 more minutes) adds V0,
V4 and V11 under other donor draws; `--signals` prints only each candidate's AUROC alone,
pooled, within tasks and across tasks; `--v6` (about 4 minutes) compares V6, fitted like the
product on the five stacked donor draws, with V11 under six draws, paired.

    python scripts/fit_variants.py [--draws | --signals | --v6]

Every variant is a look at the same 9 scored dev tasks: the best of them is optimistic. Never run
on the held-out AgentLens-Bench tasks. Extra candidate signals (V2, V10) are computed here only.
"""

from __future__ import annotations

import argparse
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import fit_profile
import numpy as np
from fit_profile import (
    DATA,
    DEV,
    EVAL_DRAWS,
    PENALTIES,
    Runs,
    dev_runs,
    fit,
    logit,
    loglik,
    loto,
    percent,
)

from agentlens.formats.stream import read_paths
from agentlens.process.calibrated import FEATURES
from agentlens.process.profiles import CALIBRATED
from agentlens.process.protocols import split_cohort
from agentlens.process.pta import run_labels
from agentlens.process.reference import build_reference
from agentlens.process.score import score_trajectory
from agentlens.process.validity import auroc, best_boundary, task_bootstrap
from agentlens.trajectory import Trajectory

ERROR = re.compile(r"Traceback|Error|error:|FAILED|failed|Exception", re.I)
OLD_PENALTIES = (0.1, 1.0, 3.0, 10.0, 30.0)
NEW = ("log_cycles", "rep_cmd", "err_end", "v_after_n", "end_V", "completeness", "shrel_E",
       "shrel_I", "shrel_V", "shrel_O", "pV", "pI", "last_v_err")  # fmt: skip
Model = Callable[[np.ndarray], np.ndarray]
Refit = Callable[[np.ndarray, np.ndarray], Model]
"""Fits the same model family with every choice (terms, penalty) kept as made."""
Procedure = Callable[[np.ndarray, np.ndarray, np.ndarray], Refit]


def shares(labels: Sequence[str | None]) -> dict[str, float]:
    found = [s for s in labels if s]
    return {s: found.count(s) / max(len(found), 1) for s in "EIVO"}


def extra(traj: Trajectory, labels: Sequence[str | None]) -> dict[str, float]:
    """Candidate signals beyond FEATURES: edit→test cycles, repeated commands, errors at the end."""
    pairs = [
        (s, lab) for s, lab in zip(traj.steps, labels, strict=True) if s.kind == "tool" and lab
    ]
    letters = [lab for _, lab in pairs]
    last_i = max((i for i, s in enumerate(letters) if s == "I"), default=-1)
    cycles, edited = 0, False
    for s in letters:
        cycles, edited = (
            (cycles + 1, False) if s == "V" and edited else (cycles, edited or s == "I")
        )
    keys = Counter(
        (s.tool_name, s.command or repr(sorted(s.arguments.items()))[:500]) for s, _ in pairs
    )
    checks = [s for s, lab in pairs if lab == "V"]
    return {
        "log_cycles": math.log1p(cycles),
        "rep_cmd": sum(n - 1 for n in keys.values()) / max(len(pairs), 1),
        "err_end": float(any(ERROR.search(s.observation or "") for s, _ in pairs[-3:])),
        "v_after_n": math.log1p(letters[last_i + 1 :].count("V") if last_i >= 0 else 0),
        "end_V": float(bool(letters) and letters[-1] == "V"),
        "last_v_err": float(bool(checks) and bool(ERROR.search(checks[-1].observation or ""))),
    }


def collect(folder: Path, protocol: str, k: int | None, seed: int = 42) -> tuple[Runs, list[str]]:
    """FEATURES + the extra candidates per scored run (passed/failed only)."""
    rows, names = [], [*FEATURES, *NEW]
    for split in split_cohort(read_paths([folder]).trajectories, protocol, k=k, seed=seed):
        reference = build_reference(split.donors, CALIBRATED)
        donor = [shares(run_labels(d, CALIBRATED)) for d in split.donors]
        for traj in (t for t in split.scored if t.outcome.status in ("passed", "failed")):
            labels = run_labels(traj, CALIBRATED)
            res = score_trajectory(traj, reference, CALIBRATED, labels=labels)
            row = {n: res.signals[n].value for n in FEATURES} | extra(traj, labels)
            row |= {"completeness": res.stages.completeness, "pV": res.stages.percent("V") / 100,
                    "pI": res.stages.percent("I") / 100}  # fmt: skip
            own = shares(labels)
            row |= {f"shrel_{s}": own[s] - float(np.mean([d[s] for d in donor])) for s in "EIVO"}
            rows.append((split.task_id, traj.outcome.status == "passed", [row[n] for n in names]))
    runs = Runs(np.array([r[0] for r in rows]), np.array([r[1] for r in rows], bool),
                np.array([r[2] for r in rows], float), [], np.full(len(rows), seed))  # fmt: skip
    return runs, names


def ridge(penalties: Sequence[float] = PENALTIES) -> Procedure:
    def procedure(x: np.ndarray, y: np.ndarray, tasks: np.ndarray) -> Refit:
        lam = max(penalties, key=lambda p: loglik(loto(x, y, tasks, p), y))
        return lambda xs, ys: lambda new: logit(fit(xs, ys, lam), new)

    return procedure


def forward(max_terms: int = 4, min_gain: float = 0.002) -> Procedure:
    """The previous procedure: forward selection by leave-task-out log-likelihood, then penalty."""

    def procedure(x: np.ndarray, y: np.ndarray, tasks: np.ndarray) -> Refit:
        chosen: list[int] = []
        best = -np.inf
        while len(chosen) < max_terms:
            gain, j = max(
                (max(loglik(loto(x[:, [*chosen, j]], y, tasks, lam), y) for lam in (1.0, 10.0)), j)
                for j in range(x.shape[1])
                if j not in chosen
            )
            if gain < best + min_gain:
                break
            chosen, best = [*chosen, j], gain
        return columns(chosen, ridge(OLD_PENALTIES)(x[:, chosen], y, tasks))

    return procedure


def ridge_top(k: int) -> Procedure:
    """Ridge on every term, keep the k largest |weight|, refit."""

    def procedure(x: np.ndarray, y: np.ndarray, tasks: np.ndarray) -> Refit:
        lam = max(PENALTIES, key=lambda p: loglik(loto(x, y, tasks, p), y))
        cols = sorted(np.argsort(-np.abs(fit(x, y, lam)[2][1:]))[:k].tolist())
        return columns(cols, ridge()(x[:, cols], y, tasks))

    return procedure


def fit_l1(x: np.ndarray, y: np.ndarray, alpha: float) -> tuple[np.ndarray, ...]:
    """L1-penalised logistic regression on standardised x by accelerated proximal gradient."""
    mean, sd = x.mean(0), x.std(0)
    sd[sd == 0] = 1.0
    z = np.c_[np.ones(len(x)), (x - mean) / sd]
    step = 1 / (0.25 * np.linalg.eigvalsh(z.T @ z / len(x)).max())
    w = v = np.zeros(z.shape[1])
    t = 1.0
    for _ in range(20000):
        g = z.T @ (1 / (1 + np.exp(-z @ v)) - y) / len(x)
        new = v - step * g
        new[1:] = np.sign(new[1:]) * np.maximum(np.abs(new[1:]) - step * alpha, 0)
        t_next = (1 + math.sqrt(1 + 4 * t * t)) / 2
        moved = float(np.abs(new - w).max())
        v, w, t = new + (t - 1) / t_next * (new - w), new, t_next
        if moved < 1e-8:
            break
    return mean, sd, w


def lasso(alphas: Sequence[float] = (0.005, 0.01, 0.02, 0.04, 0.08)) -> Procedure:
    def procedure(x: np.ndarray, y: np.ndarray, tasks: np.ndarray) -> Refit:
        def oof(a: float) -> np.ndarray:
            out = np.zeros(len(y))
            for task in np.unique(tasks):
                held = tasks == task
                out[held] = logit(fit_l1(x[~held], y[~held], a), x[held])
            return out

        alpha = max(alphas, key=lambda a: loglik(oof(a), y))
        return lambda xs, ys: lambda new: logit(fit_l1(xs, ys, alpha), new)

    return procedure


def dawes(signs: Sequence[float]) -> Procedure:
    """Unit weights with signs fixed a priori on standardised signals; only scale and intercept
    fitted."""

    def refit(x: np.ndarray, y: np.ndarray) -> Model:
        mean, sd = x.mean(0), x.std(0)
        total = ((x - mean) / sd) @ np.asarray(signs)
        model = fit(total[:, None], y, 0.0)
        return lambda new: logit(model, (((new - mean) / sd) @ np.asarray(signs))[:, None])

    return lambda x, y, tasks: refit


def columns(cols: list[int], inner: Refit) -> Refit:
    return lambda xs, ys: (lambda model: lambda new: model(new[:, cols]))(inner(xs[:, cols], ys))


def nested(dev: Runs, cols: list[int], procedure: Procedure, extra_runs: Runs | None) -> tuple:
    """Per held-out dev task: the whole procedure on the other dev tasks (+ `extra_runs`)."""
    y = dev.passed.astype(float)
    scores, bounds = np.zeros(len(y)), np.zeros(len(y))
    for task in np.unique(dev.tasks):
        held = dev.tasks == task
        x, yy, tt = dev.x[~held][:, cols], y[~held], dev.tasks[~held]
        if extra_runs is not None:
            x = np.r_[x, extra_runs.x[:, cols]]
            yy, tt = np.r_[yy, extra_runs.passed.astype(float)], np.r_[tt, extra_runs.tasks]
        refit = procedure(x, yy, tt)
        scores[held] = percent(refit(x, yy)(dev.x[held][:, cols]))
        inner = np.zeros(len(yy))  # the boundary: LTO scores with the fold's choices kept
        for other in np.unique(tt):
            part = tt == other
            inner[part] = percent(refit(x[~part], yy[~part])(x[part]))
        bounds[held] = best_boundary(inner, yy.astype(bool))
    p = dev.passed
    ba = float(np.mean([(scores[p] >= bounds[p]).mean(), (scores[~p] < bounds[~p]).mean()]))
    return scores, ba


def paired(a: np.ndarray, b: np.ndarray, runs: Runs, n: int = 2000) -> tuple[float, ...]:
    """Task bootstrap of AUROC(a) − AUROC(b): mean, 2.5 %, 97.5 %, share ≤ 0."""
    rng, tasks, diffs = np.random.default_rng(0), np.unique(runs.tasks), []
    for _ in range(n):
        idx = np.concatenate(
            [np.flatnonzero(runs.tasks == t) for t in rng.choice(tasks, len(tasks))]
        )
        if 0 < runs.passed[idx].sum() < len(idx):
            diffs.append(auroc(a[idx], runs.passed[idx]) - auroc(b[idx], runs.passed[idx]))
    d = np.array(diffs)
    return float(d.mean()), *np.percentile(d, [2.5, 97.5]), float((d <= 0).mean())


def variants(names: list[str], java: Runs) -> list[tuple[str, list[int], Procedure, Runs | None]]:
    base = list(range(len(FEATURES)))
    new5 = [names.index(n) for n in ("log_cycles", "rep_cmd", "err_end", "shrel_V", "shrel_E")]
    signs = [-1.0 if n == "waste" else 1.0 for n in FEATURES if n != "len_rel"]
    return [
        ("V0 forward selection ≤ 4 of 10 (previous product)", base, forward(), None),
        ("V1 ridge, all 10, no selection, penalty 0.1–30", base, ridge(OLD_PENALTIES), None),
        ("V2 forward selection ≤ 4 of 23 (10 + 13 new)", list(range(len(names))), forward(), None),
        ("V3 V0 + SWE-agent Java runs in every fit", base, forward(), java),
        ("V4 ridge, all 10, penalty 1–300", base, ridge(), None),
        ("V5 L1 logistic over 10, alpha by LTO", base, lasso(), None),
        ("V6 unit weights, a-priori signs, 9 (no len_rel)", [*base[:8], 9], dawes(signs), None),
        ("V7 V4 + SWE-agent Java runs in every fit", base, ridge(), java),
        ("V9 ridge 10 → 5 largest abs. weights → refit", base, ridge_top(5), None),
        ("V10 ridge, 10 + 5 new (cycles, repeats, err end, V/E share)", [*base, *new5], ridge(), None),
    ]  # fmt: skip


def stacked(stack: Runs, seed: int) -> tuple[np.ndarray, float, Runs]:
    """V11 (the product, `fit_profile.py`): ridge fitted on the other tasks under 5 donor draws
    stacked, the held-out task scored under donor draw `seed`."""
    test = dev_runs((seed,))[0]
    scores, bounds = fit_profile.nested(stack, test)
    ok = test.passed
    return (
        scores,
        float(np.mean([(scores[ok] >= bounds[ok]).mean(), (scores[~ok] < bounds[~ok]).mean()])),
        test,
    )


def by_draw(java: Runs, stack: Runs) -> None:
    """V0, V4 and V11 when every task's donors are drawn with another seed."""
    print("\n| donor draw | V0 AUROC / BA | V4 AUROC / BA | V11 AUROC / BA |\n|---|---|---|---|")
    for seed in (42, *EVAL_DRAWS):
        dev, names = collect(DEV, "agentlens-bench", 5, seed)
        cells = []
        for _, cols, procedure, extra_runs in (variants(names, java)[i] for i in (0, 4)):
            scores, ba = nested(dev, cols, procedure, extra_runs)
            cells.append(f"{auroc(scores, dev.passed):.3f} / {ba:.3f}")
        scores, ba, test = stacked(stack, seed)
        cells.append(f"{auroc(scores, test.passed):.3f} / {ba:.3f}")
        print(f"| {seed} | " + " | ".join(cells) + " |")


def dawes_stacked(x: np.ndarray, y: np.ndarray) -> Model:
    """V6's composite (unit weights, a-priori signs, no `len_rel`) with its standardisation and
    scale fitted on `x` (rows of FEATURES)."""
    cols = [i for i, name in enumerate(FEATURES) if name != "len_rel"]
    signs = np.array([-1.0 if FEATURES[i] == "waste" else 1.0 for i in cols])
    mean, sd = x[:, cols].mean(0), x[:, cols].std(0)
    sd[sd == 0] = 1.0
    model = fit((((x[:, cols] - mean) / sd) @ signs)[:, None], y, 0.0)
    return lambda new: percent(logit(model, (((new[:, cols] - mean) / sd) @ signs)[:, None]))


def nested_stacked(train: Runs, test: Runs, refit: Refit) -> tuple[np.ndarray, np.ndarray]:
    """`fit_profile.nested` for a procedure without choices: each held-out task of `test` scored
    by `refit` on the other tasks of `train` (all draws), its boundary from their LTO scores."""
    scores, bounds = np.zeros(len(test.passed)), np.zeros(len(test.passed))
    for task in np.unique(test.tasks):
        rest = train.tasks != task
        x, y, t = train.x[rest], train.passed[rest].astype(float), train.tasks[rest]
        scores[test.tasks == task] = refit(x, y)(test.x[test.tasks == task])
        inner = np.zeros(len(y))
        for other in np.unique(t):
            part = t == other
            inner[part] = refit(x[~part], y[~part])(x[part])
        bounds[test.tasks == task] = best_boundary(inner, train.passed[rest])
    return scores, bounds


def balanced(scores: np.ndarray, bounds: np.ndarray, passed: np.ndarray) -> float:
    hit = scores >= bounds
    return float(np.mean([hit[passed].mean(), (~hit[~passed]).mean()]))


def v6_against_product(stack: Runs) -> None:
    """V6 fitted on the stacked draws vs V11, nested, under the protocol's draw and five others."""
    print("\n| donor draw | V11 AUROC / BA | V6 stacked AUROC / BA | V6 − V11 paired [95 % CI] |")
    print("|---|---|---|---|")
    found = []
    for seed in (42, *EVAL_DRAWS):
        test = dev_runs((seed,))[0]
        product, product_bounds = fit_profile.nested(stack, test)
        unit, unit_bounds = nested_stacked(stack, test, dawes_stacked)
        mean, low, high, _ = paired(unit, product, test)
        found.append([auroc(product, test.passed), balanced(product, product_bounds, test.passed),
                      auroc(unit, test.passed), balanced(unit, unit_bounds, test.passed)])  # fmt: skip
        a, b, c, d = found[-1]
        print(
            f"| {seed} | {a:.3f} / {b:.3f} | {c:.3f} / {d:.3f} | {mean:+.3f} [{low:+.3f}, {high:+.3f}] |"
        )
    a, b, c, d = np.mean(found, axis=0)
    print(f"| mean | {a:.3f} / {b:.3f} | {c:.3f} / {d:.3f} | |")


def signals(dev: Runs, names: list[str]) -> None:
    """Each candidate alone: pooled AUROC, mean within-task AUROC (tasks with both outcomes), and
    the AUROC of the task's mean value given to each of its runs (what it says across tasks)."""
    print("\n| signal | pooled | within tasks | across tasks (task mean) |\n|---|---|---|---|")
    tasks = np.unique(dev.tasks)
    mixed = [t for t in tasks if 0 < dev.passed[dev.tasks == t].sum() < (dev.tasks == t).sum()]
    for i, name in enumerate(names):
        x = dev.x[:, i]
        inside = np.mean([auroc(x[dev.tasks == t], dev.passed[dev.tasks == t]) for t in mixed])
        means = np.array([x[dev.tasks == t].mean() for t in dev.tasks])
        print(
            f"| `{name}` | {auroc(x, dev.passed):.3f} | {inside:.3f} | {auroc(means, dev.passed):.3f} |"
        )


def _options(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--draws", action="store_true", help="add V0, V4, V11 under other donor draws"
    )
    what.add_argument("--signals", action="store_true", help="only each candidate signal's AUROC")
    what.add_argument("--v6", action="store_true", help="V6 against the product, paired")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    options = _options(argv)
    if options.v6:
        v6_against_product(dev_runs()[0])
        return 0
    dev, names = collect(DEV, "agentlens-bench", 5)
    if options.signals:
        signals(dev, names)
        return 0
    java, _ = collect(DATA / "swe-agent-java", "leave-one-out", None)
    print(
        f"{len(dev.passed)} dev runs in {len(set(dev.tasks))} tasks; {len(java.passed)} Java runs"
    )
    print("| variant | nested AUROC [95 % task-bootstrap CI] | nested balanced accuracy |")
    print("|---|---|---|")
    found = {}
    for label, cols, procedure, extra_runs in variants(names, java):
        scores, ba = nested(dev, cols, procedure, extra_runs)
        found[label.split()[0]] = scores
        low, high = task_bootstrap(scores, dev.passed, dev.tasks)
        print(f"| {label} | {auroc(scores, dev.passed):.3f} [{low:.3f}, {high:.3f}] | {ba:.3f} |")
    stack = dev_runs()[0]
    scores, ba, test = stacked(stack, 42)
    same = (test.tasks == dev.tasks).all() and (test.passed == dev.passed).all()
    assert same, "V11's runs differ from the others'"  # the paired bootstrap needs one order
    found["V11"] = scores
    low, high = task_bootstrap(scores, test.passed, test.tasks)
    print(f"| V11 V4 fitted on 5 donor draws stacked (PRODUCT) | {auroc(scores, test.passed):.3f} "
          f"[{low:.3f}, {high:.3f}] | {ba:.3f} |")  # fmt: skip
    for a, b in (("V4", "V0"), ("V11", "V0"), ("V11", "V4")):
        mean, lo, hi, share = paired(found[a], found[b], dev)
        print(
            f"{a} − {b}, paired task bootstrap: {mean:+.3f} [{lo:+.3f}, {hi:+.3f}], ≤ 0 in {share:.1%}"
        )
    if options.draws:
        by_draw(java, stack)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
