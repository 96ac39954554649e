"""Test-output parsers on real captured runner output (see data/README.md for how each was made).
Expected counts are read off the captured text by hand, not from the parsers."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlens.verification.verifiers import coverage
from agentlens.verification.verifiers.test_output import get_parser
from agentlens.verification.verifiers.tests_run import ANSI

DATA = Path(__file__).parent / "data" / "test_output"


def parse(runner: str, name: str, reports: dict[str, str] | None = None):
    text = ANSI.sub("", (DATA / name).read_text())
    return get_parser(runner)(text, reports or {})


@pytest.mark.parametrize(
    ("runner", "name", "tests", "failures", "errors", "skipped"),
    [
        ("pytest", "pytest_fail.txt", 4, 2, 0, 1),
        ("pytest", "pytest_pass.txt", 4, 0, 0, 1),
        ("unittest", "unittest_fail.txt", 4, 1, 1, 1),
        ("unittest", "unittest_pass.txt", 4, 0, 0, 1),
        ("maven", "mvn_fail.txt", 4, 1, 1, 1),
        ("maven", "mvn_pass.txt", 4, 0, 0, 1),
        ("cargo", "cargo_fail.txt", 3, 1, 0, 1),
        ("cargo", "cargo_pass.txt", 3, 0, 0, 1),
        ("go", "go_fail.txt", 3, 1, 0, 1),
        ("go", "go_pass.txt", 3, 0, 0, 1),
        ("jest", "jest_fail.txt", 4, 1, 0, 2),
        ("jest", "jest_pass.txt", 4, 0, 0, 2),
        ("jest", "jest_broken_suite.txt", 4, 0, 1, 2),
    ],
)
def test_counts_from_captured_output(runner, name, tests, failures, errors, skipped) -> None:
    counts = parse(runner, name)
    assert counts is not None
    assert (counts.tests, counts.failures, counts.errors, counts.skipped) == (
        tests,
        failures,
        errors,
        skipped,
    )
    assert counts.ok == (failures + errors == 0)


def test_surefire_xml_report_wins_over_console() -> None:
    reports = {
        "target/surefire-reports/TEST-demo.CalcTest.xml": (
            DATA / "TEST-demo.CalcTest.xml"
        ).read_text()
    }
    counts = parse("maven", "mvn_pass.txt", reports)
    assert (counts.source, counts.tests, counts.failures, counts.errors, counts.skipped) == (
        "junit-xml",
        4,
        1,
        1,
        1,
    )


def test_gradle_console_and_junit_xml() -> None:
    # Gradle 5+ task-line shape (only Gradle 4.4.1 runs offline here; its real output is parsed in
    # test_gradle_real.py), and the JUnit XML shape it writes under build/test-results.
    counts = get_parser("gradle")(
        "> Task :test FAILED\n\n4 tests completed, 1 failed, 1 skipped\n", {}
    )
    assert (counts.tests, counts.failures, counts.skipped) == (4, 1, 1)
    xml = (DATA / "TEST-demo.CalcTest.xml").read_text()
    counts = get_parser("gradle")(
        "BUILD FAILED", {"build/test-results/test/TEST-demo.CalcTest.xml": xml}
    )
    assert (counts.tests, counts.failures, counts.errors) == (4, 1, 1)
    assert get_parser("gradle")("BUILD SUCCESSFUL in 3s", {}) is None


def test_unrecognisable_output_is_none() -> None:
    for runner in ("pytest", "unittest", "maven", "cargo", "go", "jest"):
        assert get_parser(runner)("command not found", {}) is None


def test_coverage_reports() -> None:
    # `coverage report` printed TOTAL 16 statements, 1 missed (94%) for this capture.
    found = coverage.parse_any("coverage.json", (DATA / "coverage.json").read_text())
    assert (found.covered_lines, found.total_lines) == (15, 16)
    found = coverage.parse_any("coverage.xml", (DATA / "coverage.xml").read_text())
    assert (found.covered_lines, found.total_lines, found.percent) == (15, 16, 93.75)


def test_jacoco_report_with_its_unshipped_dtd() -> None:
    text = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><!DOCTYPE report PUBLIC '
        '"-//JACOCO//DTD Report 1.1//EN" "report.dtd"><report name="x"><package name="p">'
        '<counter type="LINE" missed="1" covered="1"/></package>'
        '<counter type="INSTRUCTION" missed="7" covered="13"/><counter type="LINE" missed="3" covered="6"/></report>'
    )
    found = coverage.parse_any("target/site/jacoco/jacoco.xml", text)
    assert (found.tool, found.covered_lines, found.total_lines) == ("jacoco", 6, 9)
