"""The line `agentlens run` prints per pair names only the checks that failed: a check skipped
for a missing tool failed nothing (`verify` says "not scored"), yet the line once read
`FAIL (YesChangesVerifier, PythonFileRegExpCountVerifier, RunTestsVerifier)` with RunTestsVerifier
skipped, and `FAIL (RunTestsVerifier)` for a run whose every other check passed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlens.scenarios.scenario import ScenarioResult
from agentlens.scenarios.session import SessionResult
from agentlens.scenarios.turns import Stop, Termination
from agentlens.scenarios.workspace import Workspace
from agentlens.trajectory import Source, Trajectory
from agentlens.verification.verifiers.base import Status, VerifierResult

SKIPPED = VerifierResult(
    "RunTestsVerifier", "skipped", "skipped: install pytest", metrics={"missing_tool": "pytest"}
)


def session(*statuses: tuple[str, Status]) -> SessionResult:
    checks = [VerifierResult(kind, status, "") for kind, status in statuses]
    return SessionResult(
        Trajectory(id="fix_sub/default", source=Source(format="agentlens-scenario")),
        Termination(Stop.MAX_USER_MESSAGES, "Reached the limit of user messages"),
        ScenarioResult("fix_sub", [*checks, SKIPPED], 0.5),
        Workspace(Path("."), "main"),
        0.0,
        1.0,
    )


@pytest.mark.parametrize(
    ("statuses", "verdict"),
    [
        (
            (("YesChangesVerifier", "fail"), ("NoChangesVerifier", "pass")),
            "FAIL (YesChangesVerifier)",
        ),
        ((("YesChangesVerifier", "pass"),), "not scored (1 check skipped: install pytest)"),
    ],
)
def test_a_skipped_check_is_never_named_as_failed(
    statuses: tuple[tuple[str, Status], ...], verdict: str
) -> None:
    assert session(*statuses).verdict == verdict
