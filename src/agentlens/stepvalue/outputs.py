"""Outputs: `summary.json`, `steps.jsonl`, `states.jsonl`, CSV tables and `report.md`.

Every table carries the channel (and slice) of each value: a step value is never reported
without the protocol that measured it.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentlens.markdown_text import markdown_text
from agentlens.spreadsheet_text import inert_cell
from agentlens.stepvalue.asv_output import asv_blocks
from agentlens.stepvalue.evaluate import StepValueResult
from agentlens.stepvalue.phases import most_negative
from agentlens.stepvalue.sensitivity import floor_sensitivity, sensitivity
from agentlens.visible_text import visible

CHANNEL_COLUMNS = [
    "channel",
    "slice",
    "n",
    "mean_g_margin",
    "mean_g_margin_max",
    "mean_perm_mean_g_margin",
    "mean_perm_mean_g_margin_max",
    "mean_delta_h",
    "mean_surprise",
    "mean_net_asv",
    "mean_perm_range_net_asv",
    "mean_semantic_gold_gain",
    "mean_anisotropy_before",
    "damage_rate",
    "repair_rate",
    "floor_rate",
    "leak_rate",
]
EFFECT_COLUMNS = [
    "channel",
    "slice",
    "value",
    "n",
    "mean_value",
    "mean_baseline",
    "mean_gap",
    "mean_abs_gap",
    "mean_gap_ci95",
    "mean_gap_ci95_na",
    "wilcoxon_p",
    "sign_disagreement_rate",
    "damage_rate",
    "repair_rate",
    "protocol_damage_count",
    "protocol_repair_loss_count",
    "floor_or_missing",
]
PHASE_COLUMNS = [
    "channel",
    "slice",
    "phase",
    "n",
    "mean_g_margin",
    "median_g_margin",
    "damage_rate",
    "repair_rate",
    "mean_surprise",
]

PAIRED_COLUMNS = [
    "slice",
    "phase",
    "n_paired",
    "mean_g_margin_baseline",
    "mean_g_margin_channel",
    "mean_g_margin_delta",
    "baseline_damage_rate",
    "channel_damage_rate",
    "protocol_damage_count",
    "protocol_repair_loss_count",
]


def _clean(value: Any) -> Any:
    """JSON-safe: non-finite floats become null (strict JSON has no Infinity/NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def write_outputs(result: StepValueResult, outdir: str | Path) -> dict[str, Path]:
    """Write every output file into `outdir`; returns name -> path."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "summary": out / "summary.json",
        "steps": out / "steps.jsonl",
        "states": out / "states.jsonl",
        "report": out / "report.md",
    }
    paths["summary"].write_text(json.dumps(_clean(result.summary()), indent=2, ensure_ascii=False))
    lam = result.config.lam
    _jsonl(paths["steps"], [row | asv_blocks(row, lam) for row in result.steps])
    _jsonl(paths["states"], result.states)
    floors = floor_sensitivity(result.steps)
    tables = {
        "steps.csv": (result.steps, None),
        "channels.csv": (result.channel_means(), CHANNEL_COLUMNS),
        "channel_effects.csv": (result.channel_effects, EFFECT_COLUMNS),
        "phases.csv": (result.phases, None),
        "phases_paired.csv": (result.paired_phases, None),
        "trajectories.csv": (result.trajectory_summaries(), None),
        "sensitivity.csv": (sensitivity(result.steps), None),
        "floor_sensitivity.csv": (floors, _columns(floors)),
    }
    tables |= {f"audit_{name}.csv": (rows, None) for name, rows in result.audits.items()}
    for name, (rows, columns) in tables.items():
        paths[name] = out / name
        _csv(paths[name], rows, columns)
    paths["report"].write_text(markdown(result))
    return paths


def _weights(cfg: Any) -> str:
    w = cfg.cost_weights
    return f"p={w.p:g},c={w.c:g},t={w.t:g},l={w.l:g},r={w.r:g}"


def _columns(rows: Sequence[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(k for r in rows for k in r))


def _jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    with path.open("w") as fh:
        for row in rows:
            fh.write(json.dumps(_clean(row), ensure_ascii=False) + "\n")


def _csv(path: Path, rows: Sequence[dict[str, Any]], columns: Sequence[str] | None) -> None:
    if columns is None:
        columns = list(
            dict.fromkeys(k for r in rows for k, v in r.items() if not isinstance(v, dict))
        )
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(row.get(k)) for k in columns})


def _cell(value: Any) -> Any:
    if isinstance(value, str):
        return inert_cell(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        return ";".join(str(_cell(v)) for v in value)
    return value


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}" if math.isfinite(value) else str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return markdown_text(value)  # ids and names come from traces


def _table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


TRAJECTORY_COLUMNS = [
    "trajectory_id",
    "channel",
    "slice",
    "n",
    "mean_g_margin",
    "sum_g_margin",
    "final_margin",
    "mean_surprise",
    "damage",
    "repair",
]


def markdown(result: StepValueResult) -> str:
    """The human report: costs, channel means, channel effects, phases, trajectories, audit."""
    parts = [*_intro(result), "## Values by channel",
             "Every value below belongs to the channel in its row; compare channels, not single numbers.",
             _table(result.channel_means(), CHANNEL_COLUMNS)]  # fmt: skip
    if result.channel_effects:
        parts += [
            "## Channel effect (value under a channel − value under direct)",
            _table(result.channel_effects, EFFECT_COLUMNS),
        ]
    parts += ["## Per phase", _table(result.phases, PHASE_COLUMNS)]
    parts += [
        "## Most negative phases (mean G, per channel and slice)",
        _table(most_negative(result.phases), PHASE_COLUMNS),
    ]
    if result.paired_phases:
        first = result.paired_phases[0]
        parts += [
            f"## Direct against {first['channel']}, paired by phase",
            _table(result.paired_phases, PAIRED_COLUMNS),
        ]
    parts += _sensitivities(result)
    parts += ["## Per trajectory", _table(result.trajectory_summaries(), TRAJECTORY_COLUMNS)]
    parts += _audit(result)
    if result.costs.errors:
        errors = result.costs.errors[:20]
        parts += ["## Errors", "\n".join(f"- {markdown_text(e)}" for e in errors)]
    return visible("\n\n".join(parts) + "\n")  # `cat report.md` cannot drive the terminal


def _intro(result: StepValueResult) -> list[str]:
    c, cfg = result.costs, result.config
    return [
        "# Step value report",
        f"Evaluator `{result.evaluator}`; channels {', '.join(result.channel_names())}; "
        f"slices {', '.join(cfg.slices)}; B = {cfg.permutations} cyclic label permutations; "
        f"floor {cfg.floor}; ε = {cfg.epsilon}; net_asv = ΔH − λ·C with λ = {cfg.lam:g}, "
        f"weights {_weights(cfg)}. G = gold-margin gain (lse competitor unless marked "
        "max), ΔH = entropy before − after (nats), S = KL(after‖before).",
        "## Cost",
        f"{c.transitions} transitions, {c.distinct_states} distinct states; evaluator calls "
        f"{c.evaluator_calls} ({c.rationale_calls} rationale + {c.scoring_calls} scoring; "
        f"{c.cache_hits} served from the response cache) against a naive {c.naive_calls}; "
        f"wall time {c.wall_s:.1f} s; prompt tokens {c.prompt_tokens} ({c.cached_tokens} cached).",
    ]


def _sensitivities(result: StepValueResult) -> list[str]:
    parts = []
    table = sensitivity(result.steps)
    if table:
        parts += [
            "## Saturation and smoothing sensitivity (ΔH at τ, S at ε)",
            _table(table, list(table[0])),
        ]
    floors = floor_sensitivity(result.steps)
    if floors:
        parts += [
            "## Floor sensitivity (top-k read-out re-derived at floor −10, −20, −30)",
            _table(floors, _columns(floors)),
        ]
    return parts


def _audit(result: StepValueResult) -> list[str]:
    if not result.audits:
        return []
    parts = [
        "## Attribution audit samples",
        "The largest-gap sample follows the spec and is biased towards extreme gaps; the "
        "random sample is the unbiased control.",
    ]
    for rows in result.audits.values():
        if rows:
            gaps = [r["gap"] for r in rows]
            parts.append(
                f"- {rows[0]['selection']}: n = {len(rows)}, mean gap {sum(gaps) / len(gaps):.3f} "
                f"({rows[0]['channel']} − {rows[0]['baseline']})"
            )
    return parts
