"""JUnit XML reports (`TEST-*.xml`), written by Maven Surefire and by Gradle's test task."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from agentlens.verification.verifiers.test_output.types import TestCounts


def parse_reports(runner: str, reports: dict[str, str]) -> TestCounts | None:
    """Sum the `<testsuite>` attributes of every JUnit XML report; None if there are none."""
    total: TestCounts | None = None
    for path, text in sorted(reports.items()):
        if not path.rsplit("/", 1)[-1].startswith("TEST-") or not path.endswith(".xml"):
            continue
        try:
            root = ET.fromstring(text)
        except ET.ParseError:
            continue
        for suite in [root] if root.tag == "testsuite" else root.iter("testsuite"):
            counts = TestCounts(
                runner,
                int(suite.get("tests", 0)),
                int(suite.get("failures", 0)),
                int(suite.get("errors", 0)),
                int(suite.get("skipped", 0)),
                source="junit-xml",
            )
            total = counts if total is None else total + counts
    return total
