"""`python -m unittest`: `Ran N tests in Xs` then `OK (skipped=1)` or `FAILED (failures=1, errors=2)`."""

from __future__ import annotations

import re

from agentlens.verification.verifiers.test_output.types import TestCounts

RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s", re.MULTILINE)
VERDICT = re.compile(r"^(OK|FAILED)(?: \((?P<detail>[^)]*)\))?\s*$", re.MULTILINE)


def parse(output: str, reports: dict[str, str]) -> TestCounts | None:
    ran = list(RAN.finditer(output))
    if not ran:
        return None
    verdict = VERDICT.search(output, ran[-1].end())
    detail = dict(_pairs(verdict["detail"])) if verdict and verdict["detail"] else {}
    return TestCounts(
        "unittest",
        int(ran[-1][1]),
        detail.get("failures", 0) + detail.get("unexpected successes", 0),
        detail.get("errors", 0),
        detail.get("skipped", 0) + detail.get("expected failures", 0),
    )


def _pairs(detail: str) -> list[tuple[str, int]]:
    pairs = []
    for part in detail.split(","):
        key, _, value = part.strip().partition("=")
        if value.isdigit():
            pairs.append((key.strip(), int(value)))
    return pairs
