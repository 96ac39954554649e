"""cargo test: one `test result: ok. 2 passed; 1 failed; 1 ignored; …` line per test binary
(unit tests, each integration test file, doc-tests), summed."""

from __future__ import annotations

import re

from agentlens.verification.verifiers.test_output.types import TestCounts

RESULT = re.compile(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")
BUILD_ERROR = re.compile(r"^error(\[E\d+\])?: could not compile", re.MULTILINE)


def parse(output: str, reports: dict[str, str]) -> TestCounts | None:
    total = TestCounts("cargo", 0, 0)
    found = False
    for passed, failed, ignored in RESULT.findall(output):
        found = True
        p, f, i = int(passed), int(failed), int(ignored)
        total = total + TestCounts("cargo", p + f + i, f, 0, i)
    if BUILD_ERROR.search(output):
        return total + TestCounts("cargo", 1, 0, 1)
    return total if found else None
