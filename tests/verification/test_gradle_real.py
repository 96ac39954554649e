"""The Gradle parser on REAL Gradle 4.4.1 output (Debian `gradle`, JDK 17; data/README.md and
data/gradle_project/capture.sh say how it was made), plus one live run when Gradle is installed.

Expected counts are not copied from the parser: console counts are read off the per-test
`... FAILED` lines and the summary line with the test's own regexes, XML counts by walking the
`<testcase>` elements (the parser only reads the `<testsuite>` attributes)."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agentlens.demo.tiny_repo import git
from agentlens.verification.verifiers import run_verifier
from agentlens.verification.verifiers.base import VerifyContext
from agentlens.verification.verifiers.test_output import get_parser
from agentlens.verification.verifiers.tests_run import ANSI

DATA = Path(__file__).parent / "data"
OUT = DATA / "test_output"
RESULTS = OUT / "gradle_test-results"
# Where Gradle writes the report, relative to the project; RunTestsVerifier keys reports so.
XML_KEY = "build/test-results/test/TEST-demo.CalcTest.xml"
FAILED_TEST = re.compile(r"^\S+ > \S+ FAILED$", re.MULTILINE)
SUMMARY = re.compile(r"^(\d+) tests completed, (\d+) failed, (\d+) skipped$", re.MULTILINE)


def console(name: str) -> str:
    return ANSI.sub("", (OUT / name).read_text())


def parse(output: str, reports: dict[str, str] | None = None):
    return get_parser("gradle")(output, reports or {})


def xml_counts(run: str) -> tuple[int, int, int, int]:
    """(tests, failures, errors, skipped) counted from the `<testcase>` children."""
    cases = ET.parse(RESULTS / run / "TEST-demo.CalcTest.xml").getroot().findall("testcase")
    assert cases, "no <testcase> in the report"
    with_child = [sum(1 for c in cases if c.find(tag) is not None) for tag in ("failure", "error")]
    skipped = sum(1 for c in cases if c.find("skipped") is not None)
    return len(cases), with_child[0], with_child[1], skipped


def test_failing_run_console_summary() -> None:
    text = console("gradle_fail.txt")
    counts = parse(text)
    assert counts is not None and counts.source == "console"
    # Gradle prints one `Class > test FAILED` line per failed test, and folds exceptions
    # (the ArithmeticException) into "failed": it has no separate error count.
    failed_lines = FAILED_TEST.findall(text)
    assert len(failed_lines) == 2
    assert SUMMARY.findall(text) == [("4", "2", "1")]
    expected = (4, len(failed_lines), 0, 1)
    assert (counts.tests, counts.failures, counts.errors, counts.skipped) == expected
    assert counts.passed == 1 and not counts.ok


def test_failing_run_junit_xml_wins_over_console() -> None:
    xml = (RESULTS / "fail" / "TEST-demo.CalcTest.xml").read_text()
    counts = parse(console("gradle_fail.txt"), {XML_KEY: xml})
    assert counts is not None and counts.source == "junit-xml"
    # Unlike Surefire (1 failure + 1 error for the same two tests), Gradle's XML writes the
    # exception as a <failure> too, and errors="0".
    assert xml_counts("fail") == (4, 2, 0, 1)
    assert (counts.tests, counts.failures, counts.errors, counts.skipped) == xml_counts("fail")


def test_passing_run_has_no_console_count_but_xml_has() -> None:
    text = console("gradle_pass.txt")
    # Gradle prints the "N tests completed" line only when a test failed.
    assert "BUILD SUCCESSFUL" in text and not SUMMARY.search(text)
    assert parse(text) is None
    xml = (RESULTS / "pass" / "TEST-demo.CalcTest.xml").read_text()
    counts = parse(text, {XML_KEY: xml})
    assert counts is not None and counts.ok
    assert xml_counts("pass") == (4, 0, 0, 1)
    assert (counts.tests, counts.failures, counts.errors, counts.skipped) == xml_counts("pass")


def test_multi_project_summaries_are_summed() -> None:
    # Two subprojects run with --continue: Gradle prints one summary per failing test task.
    text = console("gradle_multi_fail.txt")
    per_task = [tuple(map(int, found)) for found in SUMMARY.findall(text)]
    assert per_task == [(4, 2, 1), (4, 1, 1)]
    assert len(FAILED_TEST.findall(text)) == 3
    counts = parse(text)
    assert counts is not None
    assert (counts.tests, counts.failures, counts.errors, counts.skipped) == (8, 3, 0, 2)


def test_compile_error_is_no_result() -> None:
    text = console("gradle_compile_error.txt")
    assert "Compilation failed" in text and "BUILD FAILED" in text
    assert parse(text) is None


@pytest.mark.slow
def test_live_gradle_run(tmp_path: Path) -> None:
    if shutil.which("gradle") is None or not Path("/usr/share/java/junit4.jar").is_file():
        pytest.skip("needs Debian's gradle and junit4 (apt-get install gradle junit4)")
    repo = tmp_path / "proj"
    shutil.copytree(DATA / "gradle_project", repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    # --no-daemon: a daemon would outlive the test (Gradle keeps it for 3 hours idle).
    spec = {
        "type": "JavaRunTestsVerifier",
        "build_system_name": "gradle",
        "command": ["gradle", "--offline", "--no-daemon", "test"],
    }
    result = run_verifier(spec, VerifyContext(repo=repo))
    tail = result.metrics["output_tail"]
    assert SUMMARY.findall(tail) == [("4", "2", "1")], tail
    m = result.metrics
    assert (result.status, m["tests"], m["failures"], m["errors"], m["skipped"], m["source"]) == (
        "fail",
        4,
        2,
        0,
        1,
        "junit-xml",
    )
