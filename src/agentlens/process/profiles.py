"""The scoring profiles: every weight and threshold as a named field.

`calibrated` (default) scores with the paper's labeler, reference and signals, but its composite
is a logistic model of ten process signals fitted leave-task-out on ../shared/data
(`scripts/fit_profile.py`, constants in `calibrated_fit.py`) and its tiers have a stated meaning
(`tiers.py`). `paper` follows arXiv 2605.12925's own definitions (Eq. 1); `sdk-compat` reproduces
the released swe-trace-sdk (and the AgentLens-Bench columns) quirks included. Deviations are
listed in docs/profiles.md, their effect on the figures in docs/validity.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from agentlens.errors import ConfigError
from agentlens.process import calibrated_fit as fit

Profile = Literal["calibrated", "paper", "sdk-compat"]
Labeler = Literal["paper", "sdk-compat"]
DEFAULT_PROFILE: Profile = "calibrated"
StructMode = Literal["ordered", "set_f1"]
CovMode = Literal["all_states", "file", "best_path"]
PathStrategy = Literal["best_match", "canonical"]


@dataclass(frozen=True)
class Term:
    """One standardised term of the `logistic` composite: weight·(signal − mean)/sd."""

    signal: str
    weight: float
    mean: float
    sd: float


@dataclass(frozen=True)
class ProfileConfig:
    """Every knob of process scoring. Build variants with `dataclasses.replace`."""

    name: Profile
    # composite
    composite: Literal["eq1", "sdk", "logistic"]
    labeler: Labeler = "paper"
    w_struct: float = 0.20
    w_cov: float = 0.15
    w_coh: float = 0.30
    w_temp: float = 0.35
    sdk_w_cov: float = 0.25
    sdk_w_coh: float = 0.25
    sdk_w_stage: float = 0.18
    sdk_w_workflow: float = 0.12
    sdk_w_f1: float = 0.10
    sdk_w_outcome: float = 0.10
    include_outcome: bool = False
    # `logistic` (calibrated): 100·σ(intercept + Σ weight·(x − mean)/sd) over `terms`
    terms: tuple[Term, ...] = ()
    intercept: float = 0.0
    struct_mode: StructMode = "ordered"
    cov_mode: CovMode = "all_states"
    # tiers
    ideal_min: float = 70
    lucky_below: float = 47
    partial_fail_min: float = 47
    # matching / equivalence
    max_paths: int = 50
    # `canonical`: the path with the most stages, then the longest, whatever the candidate (§6)
    gt_strategy: PathStrategy = "best_match"
    line_overlap_min: float = 0.30
    search_jaccard_min: float = 0.5
    query_jaccard_min: float = 0.8
    base_command_rule: bool = True
    relabel_merged: bool = True
    # state names: the file as the repository names it (checkout root dropped, a relative name
    # resolved against the step's working directory) instead of as the step wrote it; SWE-agent's
    # editor and shell otherwise give one file two names, and a shared state goes unmatched.
    # Off in every profile: `calibrated`'s constants were fitted on names as written
    # (docs/validity.md, "One file, one state name")
    repo_relative_paths: bool = False
    # temporal
    n_segments: int = 3
    laplace_alpha: float = 0.01
    # Lucky-Pass mechanisms (C1 exact on the release; C2/C4 unpublished, spec §11.2)
    c1_max_states: int = 8
    c2_min_waste: int = 5
    c4_min_states: int = 40
    c3_impl_coverage_below: float = 50.0
    # tasks whose runs the constants were fitted on: figures over them are in-sample
    fitted_on: frozenset[str] = frozenset()


SDK_COMPAT = ProfileConfig(
    name="sdk-compat",
    composite="sdk",
    labeler="sdk-compat",
    include_outcome=True,
    struct_mode="set_f1",
    cov_mode="best_path",
    partial_fail_min=40,
)
# `paper` keeps each donor run's own labels in the reference: the release's re-labelling of all
# merged states in step order lets one run's edits decide another branch's stages (spec §5.2 step
# 5, decision 16's alternative).
PAPER = ProfileConfig(name="paper", composite="eq1", relabel_merged=False)


def _calibrated() -> ProfileConfig:
    return replace(
        PAPER,
        name="calibrated",
        composite="logistic",
        terms=tuple(Term(*term) for term in fit.TERMS),
        intercept=fit.INTERCEPT,
        ideal_min=fit.IDEAL_MIN,
        lucky_below=fit.BOUNDARY,
        partial_fail_min=fit.BOUNDARY,
        fitted_on=frozenset(fit.FIT_TASKS),
    )


CALIBRATED = _calibrated()
PROFILES: dict[str, ProfileConfig] = {
    "calibrated": CALIBRATED,
    "paper": PAPER,
    "sdk-compat": SDK_COMPAT,
}


def labeler_for(name: str) -> Labeler:
    """The labeler a profile uses (`calibrated` labels as `paper` does); a labeler name maps to
    itself, an unknown name passes through for the labeler to refuse."""
    config = PROFILES.get(name)
    return config.labeler if config is not None else name  # type: ignore[return-value]


def get_profile(
    name: Profile | ProfileConfig | str = DEFAULT_PROFILE, **overrides: object
) -> ProfileConfig:
    """Return the named profile (or pass a config through), with optional field overrides."""
    if isinstance(name, ProfileConfig):
        config = name
    else:
        try:
            config = PROFILES[name]
        except KeyError:
            raise ConfigError(
                f"unknown profile {name!r}; choose one of {sorted(PROFILES)}"
            ) from None
    return replace(config, **overrides) if overrides else config  # type: ignore[arg-type]
