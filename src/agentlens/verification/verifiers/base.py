"""The verifier seam: a verifier looks at the final repository (and the trajectory) and returns
pass / fail / error with a human-readable reason and metrics. Errors and timeouts count as failures
for the scenario verdict (spec §3). `skipped`: the check's tool is not installed (`tools`), so it
was not run; it is neither a pass nor a fail, and leaves its scenario unscored unless another
check failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from agentlens.redaction import masked_tail
from agentlens.trajectory import Trajectory
from agentlens.verification.base_index import BaseIndex, BaseIndexError

if TYPE_CHECKING:
    from agentlens.verification.sandbox import CommandResult

Status = Literal["pass", "fail", "error", "skipped"]


@dataclass
class VerifierResult:
    """One verifier's verdict. `metrics` holds counts (tests, matches, …) for reports."""

    type: str
    status: Status
    reason: str
    metrics: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    name: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def skipped(self) -> bool:
        return self.status == "skipped"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "status": self.status,
            "reason": self.reason,
            "metrics": self.metrics,
            "duration_s": round(self.duration_s, 3),
        }


@dataclass
class VerifyContext:
    """What a verifier may look at: the repository after the agent's run, the git revision it
    started from, (optionally) the trajectory for chat checks, and the scenario's folder (where
    the released scenarios keep expected files)."""

    repo: Path
    base_ref: str = "HEAD"
    trajectory: Trajectory | None = None
    timeout_s: float = 300.0
    scenario_dir: Path | None = None

    # (changed, new) once listed: each repository-state verifier of a scenario listed them
    # anew, each time reading the base into an index and looking at the config again; or why
    # the listing failed, which each of them waited for again
    _listed: tuple[set[str], set[str]] | str | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        # absolute once: files found below it are read from a descriptor of it (`read_inside`),
        # which takes a relative path as relative to the repository, not to the working folder
        self.repo = self.repo.absolute()

    def changed_files(self) -> set[str]:
        """Paths (relative, posix) modified, added or deleted since `base_ref`, untracked included."""
        return set(self._listing()[0])

    def new_files(self) -> set[str]:
        """Paths added since `base_ref` (committed or not), untracked included."""
        return set(self._listing()[1])

    def _listing(self) -> tuple[set[str], set[str]]:
        """Listed once, within the verifiers' timeout."""
        if self._listed is None:
            try:
                with BaseIndex.of(self.repo, self.base_ref, self.timeout_s) as base:
                    new = base.untracked()
                    self._listed = base.names("diff", "--name-only") | new, new
            except BaseIndexError as exc:
                self._listed = str(exc)
        if isinstance(self._listed, str):
            raise VerifierSetupError(self._listed)
        return self._listed


@runtime_checkable
class Verifier(Protocol):
    """Declared per scenario as `{"type": ..., fields}`; `verify` never raises for bad outcomes."""

    type_name: str

    def verify(self, ctx: VerifyContext) -> VerifierResult: ...


OUTPUT_TAIL_CHARS = 2000


def output_tail(output: str, chars: int = OUTPUT_TAIL_CHARS) -> str:
    """The end of a command's output that a result keeps (its `output_tail`, a reason's quote):
    masked before it is cut, since a key whose start the cut took is no key to any detector and
    a result is stored, reported and read by the judge."""
    return masked_tail(output, chars)


def run_metrics(run: CommandResult) -> dict[str, Any]:
    """A command's exit code and output tail, and the sandbox's notes on how it ran and its
    line on why it stopped the command apart (`sandbox_notes`, `stopped`): they are AgentLens's
    words, which no pattern of the user's may match."""
    metrics: dict[str, Any] = {"exit_code": run.returncode, "output_tail": output_tail(run.output)}
    if run.notes:
        metrics["sandbox_notes"] = run.notes
    if run.stopped:
        metrics["stopped"] = run.stopped
    return metrics


def stopped_result(type_name: str, what: str, run: CommandResult) -> VerifierResult | None:
    """An error saying why AgentLens stopped `what` (the disk floor, its memory, never started),
    None if it did not: like a timeout, what a stopped command printed is no verdict."""
    if not run.stopped:
        return None
    return VerifierResult(type_name, "error", f"{what} {run.stopped}", run_metrics(run))


class VerifierSetupError(Exception):
    """The verifier could not run (not a git repo, bad base ref…); becomes status `error`."""
