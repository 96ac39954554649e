"""Which verify results belong to the reviewed runs (`qi --reviews R --verify V`). The QI adds the
formal pass rate to the judge means, so both must be about the same trajectories: a result that
names a trajectory R does not hold is another run's and is left out, and a V with none of R's
trajectories is refused. A result that names no trajectory (`verify` without --trajectory) cannot
be checked; it counts, and a warning says so."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentlens.errors import ConfigError
from agentlens.os_names import printable


@dataclass
class MatchedResults:
    results: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


Sourced = tuple[str, dict[str, Any]]
"""A verify result and the file it came from."""


def reviewed_results(
    results: Sequence[Sourced], reviewed: Sequence[str], reviews_path: str
) -> MatchedResults:
    """The results about the `reviewed` trajectory ids; a `ConfigError` when no named one is."""
    wanted = set(reviewed)
    unnamed = [r for _, r in results if r.get("trajectory_id") is None]
    named = [(p, r) for p, r in results if r.get("trajectory_id") is not None]
    kept = [r for _, r in named if r["trajectory_id"] in wanted]
    if named and not kept:
        raise ConfigError(_no_match(named, reviewed, reviews_path))
    warnings = []
    if len(kept) < len(named):
        warnings.append(_partial(named, kept, reviewed, reviews_path))
    if unnamed:
        warnings.append(_unchecked(len(unnamed), reviews_path))
    return MatchedResults(kept + unnamed, warnings)


def _no_match(named: list[Sourced], reviewed: Sequence[str], reviews_path: str) -> str:
    ids = _ids([r for _, r in named])
    return (
        f"{_files(named)} and {printable(reviews_path)} are about different runs: the verify "
        f"results name {_count(len(ids), 'trajectory', 'trajectories')} ({_examples(ids)}), none "
        f"of them among the {_count(len(set(reviewed)), 'trajectory', 'trajectories')} reviewed "
        f"({_examples(list(dict.fromkeys(reviewed)))})"
    )


def _partial(
    named: list[Sourced], kept: list[dict[str, Any]], reviewed: Sequence[str], reviews_path: str
) -> str:
    covered = set(_ids(kept))
    others = [(p, r) for p, r in named if r["trajectory_id"] not in covered]
    return (
        f"{len(others)} of {len(named)} verify results name a trajectory not in "
        f"{printable(reviews_path)} ({_examples(_ids([r for _, r in others]))}, in "
        f"{_files(others)}): left out of the formal pass rate and the verifiers passed; "
        f"{len(covered)} of the {len(set(reviewed))} reviewed trajectories have a verify result"
    )


def _unchecked(count: int, reviews_path: str) -> str:
    results = "result names" if count == 1 else "results name"
    return (
        f"{count} verify {results} no trajectory (`agentlens verify` without --trajectory): "
        f"counted, but not checked to be about the runs in {printable(reviews_path)}"
    )


def _ids(results: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["trajectory_id"] for r in results))


def _examples(ids: Sequence[str], shown: int = 2) -> str:
    """At most `shown` ids, quoted (ids are input text), and how many more."""
    quoted = ", ".join(repr(printable(i)) for i in ids[:shown])
    return quoted + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def _files(results: list[Sourced]) -> str:
    return ", ".join(printable(p) for p in dict.fromkeys(p for p, _ in results))


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"
