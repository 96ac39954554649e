"""Entry point: score problems with an evaluator and collect rows, aggregates and costs."""

from __future__ import annotations

import asyncio
import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from agentlens.stepvalue.audit import Selection, audit_sample, channel_effect
from agentlens.stepvalue.channels import get_channel
from agentlens.stepvalue.model import Problem
from agentlens.stepvalue.phases import most_negative, paired_phases, phase_aggregates
from agentlens.stepvalue.results import state_rows, step_rows
from agentlens.stepvalue.runner import Costs, Evaluator, RunConfig, Runner
from agentlens.stepvalue.sensitivity import floor_sensitivity, sensitivity

HEADLINE = (
    "g_margin",
    "g_margin_max",
    "perm_mean_g_margin",
    "perm_mean_g_margin_max",
    "delta_h",
    "surprise",
    "gold_ll_gain",
)
# every G variant (§12: lse/max × identity/permutation-averaged), each against direct
G_VARIANTS = ("g_margin", "g_margin_max", "perm_mean_g_margin", "perm_mean_g_margin_max")


@dataclass
class StepValueResult:
    evaluator: str
    config: RunConfig
    problems: list[Problem]
    steps: list[dict[str, Any]]
    states: list[dict[str, Any]]
    costs: Costs
    channel_effects: list[dict[str, Any]] = field(default_factory=list)
    phases: list[dict[str, Any]] = field(default_factory=list)
    audits: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    paired_phases: list[dict[str, Any]] = field(default_factory=list)
    """§9.3: the audited rationale channel against direct, paired by transition, per phase."""

    def channel_means(self) -> list[dict[str, Any]]:
        """Mean of each headline value per (channel, slice); floor/leak rates alongside."""
        out = []
        for channel in self.channel_names():
            for which in self.config.slices:
                rows = [
                    r
                    for r in self.steps
                    if r["channel"] == channel and r["slice"] == which and not r["missing"]
                ]
                if rows:
                    out.append(_means(channel, which, rows))
        return out

    def channel_names(self) -> list[str]:
        """The channels the rows were scored under, in row order (`provided` for given beliefs);
        the configured ones when there is no row (a trajectory with no step)."""
        return list(dict.fromkeys(r["channel"] for r in self.steps)) or list(self.config.channels)

    def trajectory_summaries(self) -> list[dict[str, Any]]:
        """Per (trajectory, channel, slice): steps, mean/sum G, mean ΔH and S, damage, repairs."""
        keys = sorted({(r["trajectory_id"], r["channel"], r["slice"]) for r in self.steps})
        out = []
        for traj, channel, which in keys:
            rows = [
                r
                for r in self.steps
                if (r["trajectory_id"], r["channel"], r["slice"]) == (traj, channel, which)
                and not r["missing"]
            ]
            if rows:
                out.append(
                    {"trajectory_id": traj}
                    | _means(channel, which, rows)
                    | {
                        "sum_g_margin": sum(r["g_margin"] for r in rows),
                        "final_margin": rows[-1]["margin_after"],
                        "damage": sum(r["damage"] for r in rows),
                        "repair": sum(r["repair"] for r in rows),
                    }
                )
        return out

    def summary(self) -> dict[str, Any]:
        return {
            "evaluator": self.evaluator,
            "config": asdict(self.config),
            "trajectories": [
                {
                    "trajectory_id": p.trajectory_id,
                    "task_id": p.task_id,
                    "candidates": p.kind,
                    "candidate_ids": p.candidate_ids,
                    "gold_id": p.gold_id,
                    "steps": len(p.transitions),
                    "notes": p.notes,
                }
                for p in self.problems
            ],
            "costs": asdict(self.costs) | {"evaluator_calls": self.costs.evaluator_calls},
            "channels": self.channel_means(),
            "per_trajectory": self.trajectory_summaries(),
            "channel_effects": self.channel_effects,
            "phases": self.phases,
            "phases_paired": self.paired_phases,
            "most_negative_phases": most_negative(self.phases),
            "sensitivity": sensitivity(self.steps),
            "floor_sensitivity": floor_sensitivity(self.steps),
            "audit": {name: len(rows) for name, rows in self.audits.items()},
        }


def _finite_mean(values: list[float]) -> float | None:
    finite = [v for v in values if math.isfinite(v)]
    return statistics.fmean(finite) if finite else None


def _means(channel: str, which: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"channel": channel, "slice": which, "n": len(rows)}
    for name in HEADLINE:
        # a gold log-likelihood gain from or to b(gold) = 0 is infinite (null in the row, as in
        # the authors' code), so the mean is over the finite ones
        out[f"mean_{name}"] = _finite_mean([r[name] for r in rows])
    for name in ("net_asv", "perm_range_net_asv", "semantic_gold_gain"):
        known = [r[name] for r in rows if r.get(name) is not None]
        out[f"mean_{name}"] = statistics.fmean(known) if known else None
    out["mean_anisotropy_before"] = statistics.fmean(r["anisotropy_before"] for r in rows)
    out["damage_rate"] = statistics.fmean(float(r["damage"]) for r in rows)
    out["repair_rate"] = statistics.fmean(float(r["repair"]) for r in rows)
    out["floor_rate"] = statistics.fmean(float("used_floor_score" in r["flags"]) for r in rows)
    out["leak_rate"] = statistics.fmean(float("rationale_leak" in r["flags"]) for r in rows)
    return out


def add_channel_effects(steps: list[dict[str, Any]]) -> None:
    """Per transition: `effect_g_margin` = G under the row's channel − G under direct (and the
    same for the permutation-averaged G); None when direct was not run or is missing."""
    direct = {
        (r["trajectory_id"], r["step_id"], r["slice"]): r
        for r in steps
        if r["channel"] == "direct" and not r["missing"]
    }
    for row in steps:
        base = direct.get((row["trajectory_id"], row["step_id"], row["slice"]))
        for name in G_VARIANTS:
            ok = base is not None and not row["missing"]
            row[f"effect_{name}"] = row[name] - base[name] if ok and base else None


def audit_channel(others: Sequence[str], config: RunConfig) -> str:
    """The channel audited against direct: the spec's "report" run, generated-rationale-128
    (§9.1), else another generated rationale, else any rationale channel, else the first."""
    report = get_channel("generated-rationale-128", config.rationale_tokens).name
    if report in others:
        return report
    for part in ("generated-rationale", "rationale"):
        found = [c for c in others if part in c]
        if found:
            return found[0]
    return others[0]


def evaluate(
    problems: Sequence[Problem],
    evaluator: Evaluator,
    config: RunConfig | None = None,
    *,
    audit_n: int = 100,
) -> StepValueResult:
    """Score every transition of `problems` (sync wrapper around the async runner)."""
    return asyncio.run(evaluate_async(problems, evaluator, config or RunConfig(), audit_n=audit_n))


async def evaluate_async(
    problems: Sequence[Problem], evaluator: Evaluator, config: RunConfig, *, audit_n: int = 100
) -> StepValueResult:
    runner = Runner(evaluator, problems, config)
    await runner.run()
    steps = step_rows(runner)
    add_channel_effects(steps)
    result = StepValueResult(
        evaluator.name, config, list(problems), steps, state_rows(runner), runner.costs
    )
    others = [c for c in config.channels_resolved_names() if c != "direct"]
    if "direct" in config.channels_resolved_names():
        for which in config.slices:
            sliced = [r for r in steps if r["slice"] == which]
            for channel in others:
                for value in G_VARIANTS:
                    effect = channel_effect(sliced, channel, value=value, seed=config.seed)
                    result.channel_effects.append({"slice": which} | effect)
        if others:
            target = audit_channel(others, config)
            # §9.1 samples transitions of the full-state base runs, one row per transition
            base = "full" if "full" in config.slices else config.slices[0]
            full = [r for r in steps if r["slice"] == base]
            selections: tuple[Selection, ...] = ("largest-gap", "random")
            for selection in selections:
                result.audits[selection] = audit_sample(
                    full, target, selection=selection, n=audit_n, seed=config.seed
                )
            result.paired_phases = paired_phases(steps, target)
    result.phases = phase_aggregates(steps)
    return result
