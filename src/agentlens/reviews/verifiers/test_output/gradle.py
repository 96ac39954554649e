"""Gradle `test`: JUnit XML under `build/test-results/` when present; else the console line
`N tests completed, F failed, S skipped` (printed only when something failed), or a bare
`BUILD SUCCESSFUL` with no counts."""

from __future__ import annotations

import re

from agentlens.reviews.verifiers.test_output.junit_xml import parse_reports
from agentlens.reviews.verifiers.test_output.types import TestCounts

COMPLETED = re.compile(
    r"(\d+) tests? completed(?:, (\d+) failed)?(?:, (\d+) skipped)?", re.MULTILINE
)


def parse(output: str, reports: dict[str, str]) -> TestCounts | None:
    from_xml = parse_reports("gradle", reports)
    if from_xml is not None:
        return from_xml
    matches = list(COMPLETED.finditer(output))
    if matches:
        match = matches[-1]
        return TestCounts("gradle", int(match[1]), int(match[2] or 0), 0, int(match[3] or 0))
    return None
