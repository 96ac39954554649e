"""Per-transition rows and per-state rows from the runner's beliefs.

Every row names its channel and slice: a value is never reported without its channel. For each
transition: the identity-labelling metrics (permutation 0), the permutation-averaged values (mean
over the B rotations, spec §7 and decision §13.5), their ranges, the metrics of the averaged
belief, channel anisotropy before and after, and the quality flags used by the audit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from agentlens.stepvalue.belief import Belief
from agentlens.stepvalue.channels import Channel
from agentlens.stepvalue.config import RunConfig
from agentlens.stepvalue.cost import net_value
from agentlens.stepvalue.metrics import TransitionMetrics, transition_metrics
from agentlens.stepvalue.model import Problem, Transition
from agentlens.stepvalue.permutations import anisotropy, mean_belief
from agentlens.stepvalue.runner import Runner, Slot
from agentlens.stepvalue.semantic import semantic_gold_gain

AVERAGED = ("g_margin", "g_margin_max", "delta_h", "surprise", "gold_ll_gain")


def step_rows(runner: Runner) -> list[dict[str, Any]]:
    """One row per (trajectory, transition, channel, slice)."""
    rows = []
    for (pi, which), table in runner.tables.items():
        problem = runner.problems[pi]
        for t, (b_pos, a_pos) in zip(problem.transitions, table.pairs, strict=True):
            for channel in runner.channels:
                hashes = (table.hashes[b_pos], table.hashes[a_pos])
                row = row_head(problem, t, channel.name, which, hashes)
                before, after = (pi, which, b_pos), (pi, which, a_pos)
                row.update(_values(runner, before, after, channel, problem.gold_id))
                if not row["missing"]:
                    add_net(row, t, runner.config)
                rows.append(row)
    return rows


def row_head(
    problem: Problem, t: Transition, channel: str, which: str, hashes: tuple[str, str]
) -> dict[str, Any]:
    """The columns that name a steps.jsonl row: run, step, channel, slice and the two states."""
    return {
        "trajectory_id": problem.trajectory_id,
        "task_id": problem.task_id,
        "candidates": problem.kind,
        "step_id": t.step_id,
        "index": t.index,
        "phase": t.phase,
        "channel": channel,
        "slice": which,
        "gold_id": problem.gold_id,
        "state_before": hashes[0],
        "state_after": hashes[1],
    }


def _beliefs(runner: Runner, slot: Slot, channel: Channel) -> list[Belief] | None:
    pi, which, pos = slot
    found = [
        runner.beliefs.get((pi, which, channel.name, pos, k))
        for k in range(runner.config.permutations)
    ]
    return None if any(b is None for b in found) else [b for b in found if b is not None]


def _values(
    runner: Runner, before: Slot, after: Slot, channel: Channel, gold: str
) -> dict[str, Any]:
    b0, b1 = _beliefs(runner, before, channel), _beliefs(runner, after, channel)
    flags = _flags(runner, before, after, channel, b0, b1)
    if b0 is None or b1 is None:
        return {"missing": True, "flags": flags}
    return {"missing": False, "flags": flags} | belief_values(b0, b1, gold, runner.config.epsilon)


def belief_values(b0: list[Belief], b1: list[Belief], gold: str, eps: float) -> dict[str, Any]:
    """Every per-transition value from the beliefs before and after under each permutation
    (identity first)."""
    per_perm = [transition_metrics(x, y, gold, epsilon=eps) for x, y in zip(b0, b1, strict=True)]
    identity = per_perm[0]
    averaged = transition_metrics(mean_belief(b0), mean_belief(b1), gold, epsilon=eps)
    values: dict[str, Any] = {}
    values.update(_metric_fields(identity))
    values.update(_perm_summary(per_perm))
    values["mean_belief_g_margin"] = averaged.g_margin
    values["mean_belief_delta_h"] = averaged.delta_h
    values["anisotropy_before"] = anisotropy(b0)
    values["anisotropy_after"] = anisotropy(b1)
    values["anisotropy_change"] = values["anisotropy_after"] - values["anisotropy_before"]
    values["belief_before"] = b0[0].as_dict()
    values["belief_after"] = b1[0].as_dict()
    values["raw_scores_before"] = b0[0].raw_dict()
    values["raw_scores_after"] = b1[0].raw_dict()
    values["exact_logits"] = b0[0].exact and b1[0].exact
    values.update(_semantic(b0, b1, gold))
    if values["semantic_gold_gain"] is not None:
        values["reason"] += f"; {values.pop('semantic_reason')}"
    values["per_perm_delta_h"] = [m.delta_h for m in per_perm]
    return values


def _semantic(b0: list[Belief], b1: list[Belief], gold: str) -> dict[str, Any]:
    """`semantic_gold_gain` of the identity labelling and its permutation mean (closed set only)."""
    gain, reason = semantic_gold_gain(b0[0], b1[0], gold)
    if gain is None:
        return {"semantic_gold_gain": None}
    per_perm = [semantic_gold_gain(x, y, gold)[0] for x, y in zip(b0, b1, strict=True)]
    return {
        "semantic_gold_gain": gain,
        "perm_mean_semantic_gold_gain": float(np.mean([g for g in per_perm if g is not None])),
        "semantic_reason": reason,
    }


def add_net(row: dict[str, Any], transition: Transition, cfg: RunConfig) -> None:
    """Add net_asv and its cost to a scored row (and its arithmetic to the row's reason)."""
    row.update(_net(cfg, transition, row["delta_h"], row.pop("per_perm_delta_h")))
    row["reason"] += f"; {row.pop('net_reason')}"


def _net(
    cfg: RunConfig, transition: Transition, delta_h: float, per_perm_delta_h: list[float]
) -> dict[str, Any]:
    """`net_asv = ΔH − λ·C` for the identity labelling, with its permutation mean and range (C is
    the same under every labelling, so the range is that of ΔH when λ·C is known)."""
    net = net_value(delta_h, transition.cost, cfg.lam, cfg.cost_weights)
    per_perm = [
        net_value(dh, transition.cost, cfg.lam, cfg.cost_weights).net_asv for dh in per_perm_delta_h
    ]
    known = [v for v in per_perm if v is not None]
    return {
        "cost": {k: v for k, v in asdict(transition.cost).items() if v is not None},
        "step_cost": net.cost,
        "net_asv": net.net_asv,
        "perm_mean_net_asv": float(np.mean(known)) if known else None,
        "perm_range_net_asv": float(max(known) - min(known)) if known else None,
        "net_reason": net.reason,
    }


def _metric_fields(m: TransitionMetrics) -> dict[str, Any]:
    return m.as_dict()


def _perm_summary(per_perm: Sequence[TransitionMetrics]) -> dict[str, Any]:
    out: dict[str, Any] = {"permutations": len(per_perm)}
    for name in AVERAGED:
        values = np.array([getattr(m, name) for m in per_perm], dtype=float)
        with np.errstate(invalid="ignore"):  # an infinite gold gain (b(gold) = 0): range null
            out[f"perm_mean_{name}"] = float(values.mean())
            out[f"perm_range_{name}"] = float(values.max() - values.min())
    return out


def _flags(
    runner: Runner,
    before: Slot,
    after: Slot,
    channel: Channel,
    b0: list[Belief] | None,
    b1: list[Belief] | None,
) -> list[str]:
    flags = []
    if any(b.used_floor for b in (b0 or []) + (b1 or [])):
        flags.append("used_floor_score")
    for slot in (before, after):
        rationale = runner.rationale_of(slot, channel)
        if rationale and rationale.leaks:
            flags.append("rationale_leak")
            break
    if b0 is None or b1 is None:
        flags.append("missing_labels")
    return flags


def state_rows(runner: Runner) -> list[dict[str, Any]]:
    """One row per (trajectory, slice, distinct state, channel): beliefs per permutation."""
    rows = []
    for (pi, which), table in runner.tables.items():
        problem = runner.problems[pi]
        for pos, digest in enumerate(table.hashes):
            for channel in runner.channels:
                slot = (pi, which, pos)
                beliefs = _beliefs(runner, slot, channel)
                rationale = runner.rationale_of(slot, channel)
                rows.append(
                    {
                        "trajectory_id": problem.trajectory_id,
                        "slice": which,
                        "state": digest,
                        "position": pos,
                        "channel": channel.name,
                        "chars": len(table.texts[pos]),
                        "text": table.texts[pos],
                        "beliefs": [b.as_dict() for b in beliefs] if beliefs else None,
                        "sources": [list(b.sources) for b in beliefs] if beliefs else None,
                        "raw_scores": [b.raw_dict() for b in beliefs] if beliefs else None,
                        "mean_belief": mean_belief(beliefs).as_dict() if beliefs else None,
                        "anisotropy": anisotropy(beliefs) if beliefs else None,
                        "rationale": rationale.text if rationale else None,
                        "rationale_leaks": rationale.leaks if rationale else [],
                        "rationale_coverage": rationale.coverage if rationale else None,
                    }
                )
    return rows
