"""`ProcessResult`: everything one scoring run found, each number with its reason, plus the 40
AgentLens-Bench annotation columns (`annotation_row`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from agentlens.formats._unfinished import cut_note
from agentlens.process.divergence import Divergence
from agentlens.process.mechanisms import NAMES, FailureReason, Mechanism
from agentlens.process.profiles import get_profile
from agentlens.process.report import QualitySignal, StageComparison
from agentlens.process.signals import Signal
from agentlens.process.signals.workflow import StageCoverage
from agentlens.process.tiers import Tier, on_its_side
from agentlens.process.waste import WASTE_KINDS, WasteFinding
from agentlens.process.waste.tokens import SdkWaste
from agentlens.trajectory import OutcomeStatus

ANNOTATION_COLUMNS = (
    "task_id model trajectory_id passed n_states quality_score quality_tier verdict "
    "coverage_percent precision_percent f1_score coherence_score temporal_profile_score "
    "workflow_similarity stage_completeness bottleneck_coverage weighted_score stage_coverage_E "
    "stage_coverage_I stage_coverage_V stage_coverage_O "
    + " ".join(f"{k}_count {k}_waste" for k in WASTE_KINDS)
    + " total_wasted_steps waste_severity wasted_input_tokens wasted_output_tokens divergence_step "
    "divergence_fraction stage_order_match failure_reasons strengths"
).split()


@dataclass(frozen=True)
class ProcessResult:
    """Signals carry percent (struct, cov) or 0-1 (coh, temp, workflow) values; `composite` is 0-100."""

    trajectory_id: str
    task_id: str | None
    model: str | None
    outcome: OutcomeStatus
    profile: str
    n_states: int
    signals: dict[str, Signal]
    composite: Signal
    tier: Tier | None
    tier_reason: str
    verdict: str
    coverage_percent: float
    precision_percent: float
    f1_score: float
    stages: StageCoverage
    terminal_match: bool
    best_path_index: int
    n_paths: int
    waste: dict[str, WasteFinding]
    total_wasted_steps: int
    wasted_input_tokens: int
    wasted_output_tokens: int
    divergence: Divergence
    mechanism: tuple[Mechanism, str] | None
    failure_reasons: list[FailureReason] = field(default_factory=list)
    strengths: list[str] = field(default_factory=list)
    stage_order_match: bool = True
    tokens: int = 0
    """Σ prompt + completion tokens over the run's tool-call states, cached included (spec §13.6,
    Table 21's definition)."""
    outcome_term: float = 0.0
    """Points the composite got from the pass/fail label (sdk-compat: 10 for a pass, 5 unknown)."""
    verdict_tier: Tier | None = None
    """The release's verdict-based tier (spec §9.3), not the score tier `tier`."""
    stage_comparison: dict[str, StageComparison] = field(default_factory=dict)
    quality_signals: list[QualitySignal] = field(default_factory=list)
    """The release's report fields (spec §11.4), for reading only."""
    sdk_waste: SdkWaste | None = None
    """What `wasted_input_tokens` / `wasted_output_tokens` count, rule by rule (the SDK's rules)."""
    truncated_at_line: int | None = None
    """The line where the run's trace was cut short (a session still being written): the run was
    scored from the lines before it. Not one of the release's 40 columns."""
    in_sample: bool = False
    """The run was one of its reference's donors: scored against a graph built from itself, so
    its score flatters it. Not one of the release's 40 columns."""

    @property
    def cut_note(self) -> str:
        """` (cut at line N)` after a run scored from a cut trace, as `inspect` marks it."""
        return cut_note(self.truncated_at_line)

    @property
    def score(self) -> float:
        return self.composite.value

    @property
    def waste_severity(self) -> float:
        return round(self.total_wasted_steps / max(self.n_states, 1), 4)

    @property
    def waste_reason(self) -> str:
        """Where the wasted steps are (step indices, as `inspect` and the viewer number them),
        kind by kind, and their sum: `total_wasted_steps`."""
        terms = [
            f"{kind} {found.wasted_steps} (steps {', '.join(map(str, _steps(found)))})"
            for kind, found in self.waste.items()
            if found.wasted_steps
        ]
        return f"{' + '.join(terms)} = {self.total_wasted_steps}" if terms else "no wasted step"

    @property
    def mechanism_name(self) -> str | None:
        return NAMES[self.mechanism[0]] if self.mechanism else None

    def annotation_row(self) -> dict[str, object]:
        """The 40 AgentLens-Bench columns. Component columns keep the released definitions under
        every profile; `quality_score` / `quality_tier` are this profile's composite and tier.
        `passed` is None for a run never evaluated (the release's rows all have an outcome)."""
        score = int(self.score) if self.profile == "sdk-compat" else self._two_decimals()
        row: dict[str, object] = {
            "task_id": self.task_id,
            "model": self.model,
            "trajectory_id": self.trajectory_id,
            "passed": None if self.outcome == "unknown" else self.outcome == "passed",
            "n_states": self.n_states,
            "quality_score": score,
            "quality_tier": self.tier,
            "verdict": self.verdict,
            "coverage_percent": self.coverage_percent,
            "precision_percent": self.precision_percent,
            "f1_score": self.f1_score,
            "coherence_score": self.signals["coh"].value,
            "temporal_profile_score": self.signals["temp"].value,
            "workflow_similarity": self.signals["workflow"].value,
            "stage_completeness": self.stages.completeness,
            "bottleneck_coverage": self.stages.bottleneck,
            "weighted_score": self.stages.weighted,
        }
        for letter in "EIVO":
            row[f"stage_coverage_{letter}"] = self.stages.percent(letter)
        for kind in WASTE_KINDS:
            row[f"{kind}_count"] = self.waste[kind].count
            row[f"{kind}_waste"] = self.waste[kind].wasted_steps
        reasons = [
            {"reason": r.reason, "detail": r.detail, "severity": r.severity}
            for r in self.failure_reasons
        ]
        row |= {
            "total_wasted_steps": self.total_wasted_steps,
            "waste_severity": self.waste_severity,
            "wasted_input_tokens": self.wasted_input_tokens,
            "wasted_output_tokens": self.wasted_output_tokens,
            "divergence_step": self.divergence.step,
            "divergence_fraction": self.divergence.fraction,
            "stage_order_match": self.stage_order_match,
            "failure_reasons": json.dumps(reasons) if reasons else None,
            "strengths": json.dumps(self.strengths) if self.strengths else None,
        }
        return row

    def _two_decimals(self) -> float:
        """The score to 2 decimals, or more where 2 would cross a tier threshold (69.996, not
        70.0, beside `quality_tier` solid)."""
        config = get_profile(self.profile)
        thresholds = (config.ideal_min, config.lucky_below, config.partial_fail_min)
        return float(on_its_side(self.score, *thresholds, least=2))

    def to_dict(self) -> dict[str, object]:
        """What `agentlens score --json` prints and the store keeps: every number with its reason."""
        res = self
        return {
            "trajectory_id": res.trajectory_id,
            "profile": res.profile,
            "outcome": res.outcome,
            "score": res.score,
            "score_reason": res.composite.reason,
            "tier": res.tier,
            "tier_reason": res.tier_reason,
            "signals": {k: {"value": s.value, "reason": s.reason} for k, s in res.signals.items()},
            "waste": {k: _waste_dict(w) for k, w in res.waste.items()},
            "wasted_tokens": {
                "input": res.wasted_input_tokens,
                "output": res.wasted_output_tokens,
                "reason": res.sdk_waste.reason if res.sdk_waste else None,
            },
            "mechanism": res.mechanism_name,
            "mechanism_reason": res.mechanism[1] if res.mechanism else None,
            "verdict": res.verdict,
            "verdict_tier": res.verdict_tier,
            "tokens": res.tokens,
            "truncated_at_line": res.truncated_at_line,
            "in_sample": res.in_sample,
            "quality_signals": [
                {"type": q.signal_type, "severity": q.severity, "evidence": list(q.evidence)}
                for q in res.quality_signals
            ],
            "annotation": res.annotation_row(),
        }


def _steps(found: WasteFinding) -> list[int]:
    return [step for instance in found.instances for step in instance.steps]


def _waste_dict(found: WasteFinding) -> dict[str, object]:
    instances = [{"steps": list(i.steps), "detail": i.detail} for i in found.instances]
    return {"count": found.count, "steps": found.wasted_steps, "reason": found.reason,
            "instances": instances}  # fmt: skip
