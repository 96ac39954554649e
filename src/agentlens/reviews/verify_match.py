"""Which verify results (or reviews) belong to the runs they are used with. `qi --reviews R
--verify V` adds the formal pass rate to the judge means, so both must be about the same
trajectories; `compare A B --a-verify VA --a-reviews RA` scores run A by VA and RA, so they must
be about A's trajectories. A result that names a trajectory the reviews (or the run) do not
hold is another run's and is left out, and results with none of their trajectories are refused.
A result that names no trajectory (`verify` without --trajectory) cannot be checked; it counts,
and a warning says so."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentlens.errors import ConfigError
from agentlens.list_text import counted
from agentlens.os_names import printable
from agentlens.reviews.documents import verify_results

Sourced = tuple[str, dict[str, Any]]
"""A verify result (or review) and the file it came from."""


@dataclass
class MatchedResults:
    sourced: list[Sourced]
    """The results kept, each with its file."""
    warnings: list[str] = field(default_factory=list)

    @property
    def results(self) -> list[dict[str, Any]]:
        return [result for _, result in self.sourced]


def sourced_verify_results(paths: Sequence[str]) -> list[Sourced]:
    """Every scenario result of `agentlens verify --json` files, each with its file."""
    return [(path, result) for path in paths for result in verify_results([path])]


@dataclass(frozen=True)
class MatchTarget:
    """What the results must be about, in the words of the messages."""

    path: str
    """The reviews file (`qi`) or the compared run (`compare`)."""
    held: str
    """How its trajectories are named: "reviewed", "in runs/new"."""
    uses: str
    """What a result left out is left out of."""
    kind: str = "verify result"


def reviewed_results(
    results: Sequence[Sourced], reviewed: Sequence[str], reviews_path: str
) -> MatchedResults:
    """The results about the `reviewed` trajectory ids; a `ConfigError` when no named one is."""
    uses = "the formal pass rate and the verifiers passed"
    return matching_results(results, reviewed, MatchTarget(reviews_path, "reviewed", uses))


def run_results(
    results: Sequence[Sourced], run_ids: Sequence[str], run: str, kind: str = "verify result"
) -> MatchedResults:
    """`compare`: the results (verify results, or reviews) about a compared run's trajectories."""
    uses = "the QI" if kind == "review" else "the formal and testing checks"
    held = f"in {printable(run)}"
    return matching_results(results, run_ids, MatchTarget(run, held, uses, kind))


def matching_results(
    results: Sequence[Sourced], ids: Sequence[str], target: MatchTarget
) -> MatchedResults:
    wanted = set(ids)
    unnamed = [(p, r) for p, r in results if r.get("trajectory_id") is None]
    named = [(p, r) for p, r in results if r.get("trajectory_id") is not None]
    kept = [(p, r) for p, r in named if r["trajectory_id"] in wanted]
    if named and not kept:
        raise ConfigError(_no_match(named, ids, target))
    warnings = []
    if len(kept) < len(named):
        warnings.append(_partial(named, kept, ids, target))
    if unnamed:
        warnings.append(_unchecked(len(unnamed), target))
    return MatchedResults(kept + unnamed, warnings)


def _no_match(named: list[Sourced], target_ids: Sequence[str], target: MatchTarget) -> str:
    ids = _ids([r for _, r in named])
    return (
        f"{_files(named)} and {printable(target.path)} are about different runs: the "
        f"{target.kind}s name {counted(len(ids), 'trajectory')} "
        f"({_examples(ids)}), none of them among the "
        f"{counted(len(set(target_ids)), 'trajectory')} {target.held} "
        f"({_examples(list(dict.fromkeys(target_ids)))})"
    )


def _partial(
    named: list[Sourced],
    kept: list[Sourced],
    target_ids: Sequence[str],
    target: MatchTarget,
) -> str:
    covered = set(_ids([r for _, r in kept]))
    others = [(p, r) for p, r in named if r["trajectory_id"] not in covered]
    return (
        f"{len(others)} of {len(named)} {target.kind}s name a trajectory not in "
        f"{printable(target.path)} ({_examples(_ids([r for _, r in others]))}, in "
        f"{_files(others)}): left out of {target.uses}; {len(covered)} of the "
        f"{counted(len(set(target_ids)), 'trajectory')} {target.held} "
        f"{'has' if len(covered) == 1 else 'have'} a {target.kind}"
    )


def _unchecked(count: int, target: MatchTarget) -> str:
    results = "result names" if count == 1 else "results name"
    return (
        f"{count} verify {results} no trajectory (`agentlens verify` without --trajectory): "
        f"counted, but not checked to be about the runs in {printable(target.path)}"
    )


def _ids(results: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["trajectory_id"] for r in results))


def _examples(ids: Sequence[str], shown: int = 2) -> str:
    """At most `shown` ids, quoted (ids are input text), and how many more."""
    quoted = ", ".join(repr(printable(i)) for i in ids[:shown])
    return quoted + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def _files(results: list[Sourced]) -> str:
    return ", ".join(printable(p) for p in dict.fromkeys(p for p, _ in results))
