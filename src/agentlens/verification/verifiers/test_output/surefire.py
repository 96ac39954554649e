"""Maven Surefire: JUnit XML reports when present, else the console summary
`Tests run: N, Failures: F, Errors: E, Skipped: S` (one per module; per-class lines carry
`Time elapsed` and are not summed)."""

from __future__ import annotations

import re

from agentlens.verification.verifiers.test_output.junit_xml import parse_reports
from agentlens.verification.verifiers.test_output.types import TestCounts

LINE = re.compile(
    r"Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)(?P<rest>[^\n]*)"
)


def parse(output: str, reports: dict[str, str]) -> TestCounts | None:
    from_xml = parse_reports("surefire", reports)
    if from_xml is not None:
        return from_xml
    total: TestCounts | None = None
    for match in LINE.finditer(output):
        if "Time elapsed" in match["rest"]:
            continue
        tests, failures, errors, skipped = (int(match[i]) for i in range(1, 5))
        counts = TestCounts("surefire", tests, failures, errors, skipped)
        total = counts if total is None else total + counts
    return total
