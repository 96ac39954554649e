"""jest: `Tests:       1 failed, 1 skipped, 2 passed, 4 total` (plus `todo`); a failing suite
(e.g. a syntax error) shows up in `Test Suites: 1 failed` and is counted as an error."""

from __future__ import annotations

import re

from agentlens.verification.verifiers.test_output.types import TestCounts

TESTS = re.compile(r"^Tests:\s+(?P<body>.*\d+ total)", re.MULTILINE)
SUITES = re.compile(r"^Test Suites:\s+(?P<body>.*\d+ total)", re.MULTILINE)
COUNT = re.compile(r"(\d+) (failed|skipped|passed|todo|total)")


def parse(output: str, reports: dict[str, str]) -> TestCounts | None:
    tests = _counts(TESTS, output)
    suites = _counts(SUITES, output)
    if tests is None and suites is None:
        return None
    tests = tests or {}
    suites = suites or {}
    # A suite that fails to load contributes no test lines; without failed tests to explain
    # the failed suites, count each as an error.
    errors = 0 if tests.get("failed") else suites.get("failed", 0)
    return TestCounts(
        "jest",
        tests.get("total", 0),
        tests.get("failed", 0),
        errors,
        tests.get("skipped", 0) + tests.get("todo", 0),
    )


def _counts(pattern: re.Pattern[str], output: str) -> dict[str, int] | None:
    matches = list(pattern.finditer(output))
    if not matches:
        return None
    return {word: int(n) for n, word in COUNT.findall(matches[-1]["body"])}
