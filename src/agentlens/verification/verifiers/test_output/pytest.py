"""pytest: the final summary line, e.g. `==== 1 failed, 2 passed, 1 skipped in 0.12s ====`."""

from __future__ import annotations

import re

from agentlens.verification.verifiers.test_output.types import TestCounts

SUMMARY = re.compile(r"^[= ]*(?P<body>(?:\d+ \w+(?:, )?)+) in [\d.]+s", re.MULTILINE)
COUNT = re.compile(r"(\d+) (\w+)")
NO_TESTS = re.compile(r"^=+ no tests ran", re.MULTILINE)


def parse(output: str, reports: dict[str, str]) -> TestCounts | None:
    matches = list(SUMMARY.finditer(output))
    if not matches:
        return TestCounts("pytest", 0, 0) if NO_TESTS.search(output) else None
    counts: dict[str, int] = {}
    for number, word in COUNT.findall(matches[-1]["body"]):
        counts[word] = int(number)
    failures = counts.get("failed", 0)
    errors = counts.get("error", 0) + counts.get("errors", 0)
    skipped = counts.get("skipped", 0) + counts.get("xfailed", 0)
    passed = counts.get("passed", 0) + counts.get("xpassed", 0)
    return TestCounts("pytest", passed + failures + errors + skipped, failures, errors, skipped)
