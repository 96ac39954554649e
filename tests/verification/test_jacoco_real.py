"""The JaCoCo parser and the coverage gate of RunTestsVerifier on a REAL JaCoCo 0.8.6 XML report
(data/test_output/jacoco.xml; data/README.md and data/jacoco_project/ say how it was made).

Expected values are not typed in: they are read from the report's own report-level `<counter>`
elements with xml.etree, and those are cross-checked against the per-line `mi/ci/mb/cb` data."""

from __future__ import annotations

import math
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agentlens.verification.verifiers import coverage
from agentlens.verification.verifiers.base import VerifyContext
from agentlens.verification.verifiers.tests_run import RunTestsVerifier

DATA = Path(__file__).parent / "data" / "test_output"
REPORT = DATA / "jacoco.xml"
MAVEN_PATH = "target/site/jacoco/jacoco.xml"


def _root() -> ET.Element:
    # The DTD (report.dtd) is declared but not shipped; expat reads the DOCTYPE without loading it.
    return ET.fromstring(REPORT.read_bytes())


def report_counters() -> dict[str, tuple[int, int]]:
    """{type: (missed, covered)} from the `<counter>` children of `<report>` itself."""
    return {
        c.attrib["type"]: (int(c.attrib["missed"]), int(c.attrib["covered"]))
        for c in _root().findall("counter")
    }


def line_level_totals() -> dict[str, tuple[int, int]]:
    """The same totals rebuilt from every `<sourcefile>/<line>`: JaCoCo counts a line as covered
    when at least one of its instructions ran (ci > 0), missed otherwise."""
    lines = _root().findall("./package/sourcefile/line")
    assert lines, "no <line> elements in the report"
    mi = sum(int(x.attrib["mi"]) for x in lines)
    ci = sum(int(x.attrib["ci"]) for x in lines)
    mb = sum(int(x.attrib["mb"]) for x in lines)
    cb = sum(int(x.attrib["cb"]) for x in lines)
    covered = sum(1 for x in lines if int(x.attrib["ci"]) > 0)
    return {
        "INSTRUCTION": (mi, ci),
        "BRANCH": (mb, cb),
        "LINE": (len(lines) - covered, covered),
    }


def test_report_is_real_jacoco_output() -> None:
    text = REPORT.read_text()
    assert '"-//JACOCO//DTD Report 1.1//EN"' in text
    root = _root()
    assert root.tag == "report" and root.find("sessioninfo") is not None
    assert {c.attrib["name"] for c in root.iter("class")} == {"demo/Calc", "demo/Text"}
    # A partly covered report: every counter type has both missed and covered items.
    counters = report_counters()
    for kind in ("INSTRUCTION", "BRANCH", "LINE"):
        missed, covered = counters[kind]
        assert missed > 0 and covered > 0, kind


def test_report_level_counters_agree_with_the_line_data() -> None:
    counters = report_counters()
    for kind, totals in line_level_totals().items():
        assert counters[kind] == totals, kind


def test_parser_reads_the_report_level_line_counter() -> None:
    missed, covered = report_counters()["LINE"]
    found = coverage.parse_jacoco_xml(REPORT.read_text())
    assert (found.tool, found.covered_lines, found.total_lines) == (
        "jacoco",
        covered,
        covered + missed,
    )
    assert found.percent == round(100.0 * covered / (covered + missed), 2)
    # Line coverage, not instruction or branch coverage (they differ on this report).
    for kind in ("INSTRUCTION", "BRANCH"):
        k_missed, k_covered = report_counters()[kind]
        assert (found.covered_lines, found.total_lines) != (k_covered, k_missed + k_covered)
    # Not the first LINE counter in document order (that one belongs to a method).
    first_method_line = _root().find(".//method/counter[@type='LINE']")
    assert first_method_line is not None
    assert int(first_method_line.attrib["covered"]) != covered


@pytest.mark.parametrize("path", [MAVEN_PATH, "build/reports/jacoco/test/jacocoTestReport.xml"])
def test_report_is_recognised_by_path_and_content(path: str) -> None:
    missed, covered = report_counters()["LINE"]
    found = coverage.parse_any(path, REPORT.read_text())
    assert found is not None and (found.covered_lines, found.total_lines) == (
        covered,
        covered + missed,
    )
    # The DOCTYPE names JACOCO within the first 400 characters, so any file name works.
    found = coverage.parse_any("report.xml", REPORT.read_text())
    assert found is not None and found.tool == "jacoco"
    found = coverage.from_reports({"a/coverage.json": "{}", MAVEN_PATH: REPORT.read_text()})
    assert found is not None and found.tool == "jacoco"


def line_percent() -> float:
    missed, covered = report_counters()["LINE"]
    return 100.0 * covered / (covered + missed)


@pytest.fixture
def repo_with_report(tmp_path: Path) -> Path:
    """A project whose 'test run' prints a real unittest summary and writes the real JaCoCo
    report where Maven's jacoco:report puts it (a report the project brought, and the run did
    not write, is not read: `test_verifier_lies.py`)."""
    repo = tmp_path / "proj"
    repo.mkdir()
    shutil.copy(REPORT, repo / "report-of-the-run.xml")
    shutil.copy(DATA / "unittest_pass.txt", repo / "out.txt")
    return repo


def run_gate(repo: Path, min_coverage: float) -> tuple[str, str, dict]:
    write = f"mkdir -p {Path(MAVEN_PATH).parent} && cp report-of-the-run.xml {MAVEN_PATH}"
    command = f"{write} && cat out.txt"
    verifier = RunTestsVerifier(runner="unittest", command=command, min_coverage=min_coverage)
    result = verifier.verify(VerifyContext(repo=repo, timeout_s=60))
    return result.status, result.reason, result.metrics


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [
        (0, "pass"),
        (math.floor(line_percent()), "pass"),
        (round(line_percent(), 2), "pass"),  # exactly the reported percentage
        (math.ceil(line_percent()), "fail"),
        (100, "fail"),
    ],
)
def test_coverage_gate_around_the_real_percentage(
    repo_with_report: Path, threshold: float, expected: str
) -> None:
    missed, covered = report_counters()["LINE"]
    status, reason, metrics = run_gate(repo_with_report, threshold)
    assert status == expected, reason
    assert metrics["coverage_tool"] == "jacoco"
    assert (metrics["covered_lines"], metrics["total_lines"]) == (covered, covered + missed)
    assert metrics["coverage_percent"] == round(line_percent(), 2)
    assert f"line coverage {round(line_percent(), 2)}%" in reason


def test_gate_uses_line_not_instruction_coverage(repo_with_report: Path) -> None:
    """A threshold between the line and instruction percentages fails, although instruction
    coverage would meet it (the gate is documented as line coverage)."""
    i_missed, i_covered = report_counters()["INSTRUCTION"]
    instruction = 100.0 * i_covered / (i_missed + i_covered)
    assert instruction > line_percent()  # true of this report; the test below relies on it
    threshold = (line_percent() + instruction) / 2
    status, reason, _ = run_gate(repo_with_report, threshold)
    assert status == "fail", reason
