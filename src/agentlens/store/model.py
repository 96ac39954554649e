"""What the results store holds: runs, and per trajectory a record of metrics plus the full result.

Every command that writes to the store writes one `Run` (what was done, with which scorer version
and settings) and one `Record` per trajectory it looked at. A `Metric` is the small scorer-result
contract: a number and/or a label, with the `reason` that shows its arithmetic; `step` is set for
per-step values (step value). `Record.body` is the command's own JSON for that trajectory
(`agentlens score --json` output, a review's `to_dict()`), kept whole so nothing is lost.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

RUN_KINDS = ("import", "score", "review", "stepvalue", "verify", "telemetry", "scenario")
INCOMPLETE = "incomplete"
"""The summary key set while a run saved in parts (`SqlStore.save_part`) lacks its last part."""
INCOMPLETE_NOTE = (
    "incomplete: its command stopped before saving every record; run the same command again "
    "to add the rest"
)


class Metric(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    name: str
    value: float | None = None
    label: str | None = None
    reason: str | None = None
    step: int | None = None


class Record(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One trajectory's results in one run. `trajectory` is the store's content digest of the
    trajectory (`Store.trajectory(digest)` gives it back); `trajectory_id` is its own id."""

    trajectory: str
    trajectory_id: str
    task_id: str | None = None
    model: str | None = None
    outcome: str | None = None
    metrics: list[Metric] = msgspec.field(default_factory=list)
    body: dict[str, Any] = msgspec.field(default_factory=dict)

    def metric(self, name: str) -> Metric | None:
        return next((m for m in self.metrics if m.name == name and m.step is None), None)


def now() -> datetime:
    return datetime.now(UTC)


class Run(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One command's results. `scorer` names what produced them with its version
    ("process/paper/1", "judge/…"), so old results can be told apart when a rubric changes.
    `id` is given by the store on save when left empty."""

    kind: str
    scorer: str
    id: str = ""
    label: str | None = None
    created: datetime = msgspec.field(default_factory=now)
    agentlens_version: str = ""
    settings: dict[str, Any] = msgspec.field(default_factory=dict)
    summary: dict[str, Any] = msgspec.field(default_factory=dict)
    n_records: int = 0

    @property
    def complete(self) -> bool:
        """False for a run saved in parts whose command has not saved its last part (it was
        interrupted, or is still running): its records are only some of the run's."""
        return not self.summary.get(INCOMPLETE)
