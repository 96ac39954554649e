"""go test -v: `--- PASS/FAIL/SKIP: TestName` lines, plus package lines `FAIL <pkg> [build failed]`
/ `[setup failed]`, each counted as an error. A test with subtests (`TestX/sub`) is counted through
its subtests only, so a failing subtest is one failure, not two."""

from __future__ import annotations

import re

from agentlens.verification.verifiers.test_output.types import TestCounts

RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)", re.MULTILINE)
BROKEN = re.compile(r"^FAIL\s+\S+\s+\[(build|setup) failed\]", re.MULTILINE)
PACKAGE = re.compile(r"^(ok|FAIL)\s+\S+\s", re.MULTILINE)


def parse(output: str, reports: dict[str, str]) -> TestCounts | None:
    verdicts = dict((name, verdict) for verdict, name in RESULT.findall(output))
    broken = len(BROKEN.findall(output))
    if not verdicts and not broken and not PACKAGE.search(output):
        return None
    parents = {name.rsplit("/", 1)[0] for name in verdicts if "/" in name}
    leaves = [v for name, v in verdicts.items() if name not in parents]
    return TestCounts(
        "go", len(leaves) + broken, leaves.count("FAIL"), broken, leaves.count("SKIP")
    )
