"""Coverage report parsing: coverage.py (`coverage json` / Cobertura-style `coverage xml`) and JaCoCo
XML. Each returns a line-coverage percentage and the counts behind it."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

# JaCoCo reports declare a DTD that is never shipped next to them; drop it before parsing.
DOCTYPE = re.compile(r"<!DOCTYPE[^>]*>", re.IGNORECASE)


@dataclass
class Coverage:
    tool: str
    covered_lines: int
    total_lines: int

    @property
    def percent(self) -> float:
        return round(100.0 * self.covered_lines / self.total_lines, 2) if self.total_lines else 0.0

    def to_dict(self) -> dict[str, float | int | str]:
        return {
            "coverage_tool": self.tool,
            "covered_lines": self.covered_lines,
            "total_lines": self.total_lines,
            "coverage_percent": self.percent,
        }


def parse_coverage_json(text: str) -> Coverage:
    """`coverage json` output: `totals.covered_lines` / `totals.num_statements`."""
    totals = json.loads(text)["totals"]
    return Coverage("coverage.py", int(totals["covered_lines"]), int(totals["num_statements"]))


def parse_cobertura_xml(text: str) -> Coverage:
    """`coverage xml` (Cobertura format): root attributes `lines-covered` / `lines-valid`."""
    root = ET.fromstring(text)
    return Coverage(
        "coverage.py", int(root.get("lines-covered", 0)), int(root.get("lines-valid", 0))
    )


def parse_jacoco_xml(text: str) -> Coverage:
    """JaCoCo XML: the report-level `<counter type="LINE" missed= covered=>`."""
    root = ET.fromstring(DOCTYPE.sub("", text, count=1))
    for counter in root.findall("counter"):
        if counter.get("type") == "LINE":
            covered = int(counter.get("covered", 0))
            return Coverage("jacoco", covered, covered + int(counter.get("missed", 0)))
    return Coverage("jacoco", 0, 0)


def parse_any(path: str, text: str) -> Coverage | None:
    """Pick the parser from the report's name and content; None if it is not a coverage report."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".json") and '"totals"' in text:
        return parse_coverage_json(text)
    if "jacoco" in path.lower() or "JACOCO" in text[:400]:
        return parse_jacoco_xml(text)
    if name == "coverage.xml" or "<coverage" in text[:400]:
        return parse_cobertura_xml(text)
    return None


def from_reports(reports: dict[str, str], wanted: str | None = None) -> Coverage | None:
    """The first coverage report found among a run's report files (or the one at `wanted`)."""
    for path, text in sorted(reports.items()):
        if wanted and path != wanted:
            continue
        try:
            found = parse_any(path, text)
        except (ValueError, KeyError, ET.ParseError):
            continue
        if found is not None:
            return found
    return None
