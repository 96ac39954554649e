"""Entry point: score one trajectory against a reference (spec §6-§12).

`score_trajectory(traj, reference, profile="calibrated", labels=None) -> ProcessResult`. Under
`sdk-compat` the result reproduces the released swe-trace-sdk run with the same reference, column
for column (`annotation_row()`); under `paper` the four signals and Eq. 1 follow the paper; under
`calibrated` the paper's signals plus a few process features (ten terms in all) feed the fitted
logistic composite (`calibrated.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agentlens.errors import AgentLensError
from agentlens.formats._unfinished import cut_at_line
from agentlens.process.calibrated import calibrated_composite, features, reference_baseline
from agentlens.process.composite import eq1, outcome_term, sdk_score
from agentlens.process.divergence import divergence
from agentlens.process.match import MatchResult, PathPlan, match_candidate
from agentlens.process.mechanisms import failure_reasons, mechanism, strengths
from agentlens.process.profiles import DEFAULT_PROFILE, Profile, ProfileConfig, get_profile
from agentlens.process.pta import Reference, equivalence_for, run_labels, run_states
from agentlens.process.report import Inefficiency, release_report
from agentlens.process.result import ProcessResult
from agentlens.process.signals import Signal
from agentlens.process.signals.coherence import coherence
from agentlens.process.signals.coverage import (
    all_states_coverage,
    best_path_coverage,
    file_coverage,
)
from agentlens.process.signals.structure import ordered_struct, set_f1
from agentlens.process.signals.temporal import temporal
from agentlens.process.signals.workflow import StageCoverage, stage_coverage, workflow_similarity
from agentlens.process.stages import Stage
from agentlens.process.states import ProcState
from agentlens.process.tiers import tier, verdict, verdict_tier
from agentlens.process.waste import WasteFinding, detect_all
from agentlens.process.waste.tokens import SdkWaste, sdk_waste
from agentlens.trajectory import OutcomeStatus, Trajectory

FAILING_VERDICTS = ("FAIL", "LIKELY FAIL", "UNCERTAIN")


def score_trajectory(
    traj: Trajectory,
    reference: Reference,
    profile: Profile | ProfileConfig = DEFAULT_PROFILE,
    labels: Sequence[Stage | None] | None = None,
) -> ProcessResult:
    """Score `traj` against `reference`; `labels` (one per step) default to the profile's labeler."""
    config = get_profile(profile)
    labels = labels if labels is not None else run_labels(traj, config)
    states = run_states(traj, labels, config)
    plan = reference.cached(
        ("plan", config.max_paths), lambda: PathPlan.of(reference.paths(config.max_paths))
    )
    eq = equivalence_for(config)
    index = reference.terminal_index(eq)
    result = match_candidate(states, plan, eq, index, config.gt_strategy)
    scored = _assemble(traj, reference, config, states, result)
    if config.composite != "logistic":
        return scored
    return _calibrate(scored, [s.stage for s in states[1:]], reference, config)


def _calibrate(
    res: ProcessResult, stages: list[str], ref: Reference, config: ProfileConfig
) -> ProcessResult:
    """The calibrated composite from the run's features, then its tier and mechanism."""

    signals = res.signals | features(res, stages, reference_baseline(ref))
    composite = calibrated_composite(config, signals, res.n_states)
    the_tier, tier_reason = tier(composite.value, res.outcome, config)
    mech = None
    if the_tier == "lucky":
        mech = mechanism(
            config,
            n_states=res.n_states,
            total_waste=res.total_wasted_steps,
            v_coverage=res.stages.percent("V"),
            i_coverage=res.stages.percent("I"),
            i_total=res.stages.total.get("I", 0),
            failing_verdict=res.verdict in FAILING_VERDICTS,
        )
    return replace(
        res, signals=signals, composite=composite, tier=the_tier, tier_reason=tier_reason,
        mechanism=mech,
    )  # fmt: skip


def _assemble(
    traj: Trajectory, ref: Reference, config: ProfileConfig, states: list[ProcState], m: MatchResult
) -> ProcessResult:
    best = m.best
    if best is None:
        raise AgentLensError(
            f"reference for {ref.donors[:1] or 'unknown donors'} has no start-to-end path; rebuild it"
        )
    cand = states[1:]
    cand_stages = [s.stage for s in states]
    path_stages = [s.stage for s in best.path]
    stages = stage_coverage(best.path, best.pairs)
    struct_set = set_f1(best.matched, best.total, len(states))
    signals = {
        "struct": _struct(config, m, struct_set),
        "cov": _cov(config, ref, m),
        "coh": coherence(states),
        "temp": temporal(cand_stages, path_stages, config.n_segments, config.laplace_alpha),
        "workflow": workflow_similarity(cand_stages, path_stages),
        "stage_completeness": stages.completeness_signal(),
    }
    coverage = best.coverage
    outcome = traj.outcome.status
    composite = _composite(config, signals, stages, struct_set.value, coverage, outcome)
    the_tier, tier_reason = tier(composite.value, outcome, config)
    the_verdict = verdict(stages.weighted, stages.completeness, stages.bottleneck, m.terminal_match)
    reasons = []
    if the_verdict in FAILING_VERDICTS:
        reasons = failure_reasons(
            m.divergence_index, best.total, stages, signals["coh"].value, coverage
        )
    waste = detect_all(cand, paths_first(ref, config), best.path, _files(ref))
    total_waste = sum(w.wasted_steps for w in waste.values())
    ineff, sdk_waste = _inefficiency(waste, cand, states, best.path, m)
    mech = None
    if the_tier == "lucky":
        mech = mechanism(
            config,
            n_states=len(cand),
            total_waste=total_waste,
            v_coverage=stages.percent("V"),
            i_coverage=stages.percent("I"),
            i_total=stages.total.get("I", 0),
            failing_verdict=the_verdict in FAILING_VERDICTS,
        )
    order_match = _stage_order(best.path, cand)
    return ProcessResult(
        trajectory_id=traj.id,
        task_id=traj.task_id,
        model=traj.model,
        outcome=outcome,
        profile=config.name,
        n_states=len(cand),
        signals=signals,
        composite=composite,
        tier=the_tier,
        tier_reason=tier_reason,
        verdict=the_verdict,
        coverage_percent=coverage,
        precision_percent=best.matched / len(states) * 100.0,
        f1_score=struct_set.value,
        stages=stages,
        terminal_match=m.terminal_match,
        best_path_index=best.index,
        n_paths=m.n_paths,
        waste=waste,
        total_wasted_steps=total_waste,
        wasted_input_tokens=sdk_waste.input_tokens,
        wasted_output_tokens=sdk_waste.output_tokens,
        sdk_waste=sdk_waste,
        divergence=divergence(best.path, best.missing_idx, states, m.alignment, len(cand)),
        mechanism=mech,
        failure_reasons=reasons,
        strengths=strengths(stages, signals["coh"].value, m.terminal_match),
        stage_order_match=order_match,
        tokens=sum(s.input_tokens + s.output_tokens for s in cand),
        outcome_term=outcome_term(config, outcome),
        truncated_at_line=cut_at_line(traj),
        in_sample=traj.id in ref.donors,
        verdict_tier=verdict_tier(the_verdict, coverage, signals["coh"].value, stages.completeness),
        **release_report(
            outcome, the_verdict, m, states, stages, signals["coh"].value, ineff, order_match
        ),
    )


def _composite(
    config: ProfileConfig,
    signals: dict[str, Signal],
    stages: StageCoverage,
    f1: float,
    coverage: float,
    outcome: OutcomeStatus,
) -> Signal:
    """The profile's composite: the release's (`sdk`) or Eq. 1; `logistic` replaces it in
    `_calibrate`."""
    if config.composite == "sdk":
        return sdk_score(
            config,
            cov=coverage,
            coh=signals["coh"].value,
            stage_completeness=stages.completeness,
            workflow=signals["workflow"].value,
            f1=f1,
            outcome=outcome,
        )
    return eq1(
        config,
        signals["struct"].value,
        signals["cov"].value,
        signals["coh"].value,
        signals["temp"].value,
    )


def _inefficiency(
    waste: dict[str, WasteFinding],
    cand: list[ProcState],
    states: list[ProcState],
    path: list[ProcState],
    m: MatchResult,
) -> tuple[Inefficiency, SdkWaste]:
    """The release's inefficiency counts, and the steps they waste with their tokens."""
    repeats = waste["blind_retry"].positions | waste["cyclic_pattern"].positions
    found, _ = sdk_waste(cand, states, m.alignment, path, repeats)
    ineff = Inefficiency(
        waste["blind_retry"].count,
        waste["cyclic_pattern"].count,
        found.redundant,
        found.unnecessary,
        found.steps,
    )
    return ineff, found


def paths_first(ref: Reference, config: ProfileConfig) -> list[ProcState]:
    paths = ref.paths(config.max_paths)
    return paths[0] if paths else []


def _files(ref: Reference) -> set[str]:
    return ref.cached("files", lambda: {n.file_path for n in ref.nodes.values() if n.file_path})


def _struct(config: ProfileConfig, m: MatchResult, struct_set: Signal) -> Signal:
    if config.struct_mode == "set_f1" or m.best is None or m.lists is None:
        return struct_set
    path = [s for s in m.best.path if not s.is_initial]
    return ordered_struct(path, len(m.candidate) - 1, m.lists, len(m.candidate))


def _cov(config: ProfileConfig, ref: Reference, m: MatchResult) -> Signal:
    assert m.best is not None
    if config.cov_mode == "best_path" or m.lists is None:
        return best_path_coverage(m.best.matched, m.best.total)
    if config.cov_mode == "file":
        return file_coverage(list(ref.nodes.values()), m.candidate)
    nodes = [n for n in ref.nodes.values() if not n.is_initial]
    return all_states_coverage(nodes, len(m.candidate), m.lists)


def _stage_order(path: Sequence[ProcState], cand: Sequence[ProcState]) -> bool:
    """The release's check reduces to: every non-O candidate stage also occurs in the path."""
    ref_stages = {s.stage for s in path if s.stage and s.stage != "O"}
    return all(s.stage in ref_stages for s in cand if s.stage and s.stage != "O")
