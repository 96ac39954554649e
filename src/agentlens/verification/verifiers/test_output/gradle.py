"""Gradle `test`: JUnit XML under `build/test-results/` when present; else the console lines
`N tests completed, F failed, S skipped`, one per test task that had a failure (a multi-project
build run with `--continue` prints several; they are summed). Gradle counts an exception as a
failure (no error count), and prints no count when every test passed: a bare `BUILD SUCCESSFUL`
gives None. Checked on real Gradle 4.4.1 output (tests/verification/data/README.md)."""

from __future__ import annotations

import re

from agentlens.verification.verifiers.test_output.junit_xml import parse_reports
from agentlens.verification.verifiers.test_output.types import TestCounts

COMPLETED = re.compile(
    r"(\d+) tests? completed(?:, (\d+) failed)?(?:, (\d+) skipped)?", re.MULTILINE
)


def parse(output: str, reports: dict[str, str]) -> TestCounts | None:
    from_xml = parse_reports("gradle", reports)
    if from_xml is not None:
        return from_xml
    total: TestCounts | None = None
    for match in COMPLETED.finditer(output):
        counts = TestCounts("gradle", int(match[1]), int(match[2] or 0), 0, int(match[3] or 0))
        total = counts if total is None else total + counts
    return total
