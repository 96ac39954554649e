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


def reviewed_results(
    results: Sequence[dict[str, Any]],
    reviewed: Sequence[str],
    reviews_path: str,
    verify_paths: Sequence[str],
) -> MatchedResults:
    """The results about the `reviewed` trajectory ids; a `ConfigError` when no named one is."""
    wanted = set(reviewed)
    unnamed = [r for r in results if r.get("trajectory_id") is None]
    named = [r for r in results if r.get("trajectory_id") is not None]
    kept = [r for r in named if r["trajectory_id"] in wanted]
    if named and not kept:
        raise ConfigError(_no_match(named, reviewed, reviews_path, verify_paths))
    warnings = []
    if len(kept) < len(named):
        warnings.append(_partial(named, kept, reviewed, reviews_path, verify_paths))
    if unnamed:
        warnings.append(_unchecked(len(unnamed), reviews_path))
    return MatchedResults(kept + unnamed, warnings)


def _no_match(
    named: list[dict[str, Any]],
    reviewed: Sequence[str],
    reviews_path: str,
    verify_paths: Sequence[str],
) -> str:
    return (
        f"{_files(verify_paths)} and {printable(reviews_path)} are about different runs: none of "
        f"the {len(named)} trajectories the verify results name ({_examples(_ids(named))}) is "
        f"among the {len(reviewed)} reviewed ({_examples(reviewed)})"
    )


def _partial(
    named: list[dict[str, Any]],
    kept: list[dict[str, Any]],
    reviewed: Sequence[str],
    reviews_path: str,
    verify_paths: Sequence[str],
) -> str:
    covered = set(_ids(kept))
    others = [i for i in _ids(named) if i not in covered]
    return (
        f"{len(named) - len(kept)} of {len(named)} verify results name a trajectory not in "
        f"{printable(reviews_path)} ({_examples(others)}, in {_files(verify_paths)}): left out of "
        f"the formal pass rate and the verifiers passed; {len(covered)} of the "
        f"{len(set(reviewed))} reviewed trajectories have a verify result"
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


def _files(paths: Sequence[str]) -> str:
    return ", ".join(printable(p) for p in paths)
