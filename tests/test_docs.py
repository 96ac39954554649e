"""The README, ARCHITECTURE.md and docs/: links resolve, commands exist, examples run."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

from agentlens.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text()):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists() or (anchor and anchor not in _anchors(linked)):
            broken.append(target)
    assert broken == []


def test_the_readme_is_a_guide_not_a_notebook() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 450


def test_the_readme_gives_every_exit_code_a_stop_or_answer_ends_with() -> None:
    """`aborted` (a "no", or no input, at a question) exits 1, not 130: the table said neither."""
    section = (ROOT / "README.md").read_text().partition("## Exit codes")[2].partition("```")[0]
    for said in ("**1**", "`aborted`", "**130** interrupted", "**143** / **129**"):
        assert said in section, said


def test_architecture_stays_short() -> None:
    assert len((ROOT / "ARCHITECTURE.md").read_text().splitlines()) <= 120


def test_every_command_the_readme_shows_exists() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = "\n".join(re.findall(r"```bash\n(.*?)```", readme, re.DOTALL))
    shown = set(re.findall(r"(?:^|[\s(])agentlens (?:--debug )?([a-z]+)", blocks, re.MULTILINE))
    assert shown and shown <= set(COMMANDS)


def _scoring_example(number: int) -> list[str]:
    """The lines printed by the `number`th python block of docs/scoring.md, run from the root."""
    page = (ROOT / "docs" / "scoring.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    assert len(blocks) >= number, f"docs/scoring.md has no python block {number}"
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(blocks[number - 1], "docs/scoring.md", "exec"), {})  # our own docs
    finally:
        os.chdir(cwd)
    return out.getvalue().splitlines()


def test_the_scoring_example_runs_on_the_shared_data() -> None:
    lines = _scoring_example(1)
    assert len(lines) == 3
    assert all(line.startswith("psf__requests-1724-") and " = " in line for line in lines)


def test_the_cohort_example_prints_each_model_of_the_shared_data() -> None:
    lines = _scoring_example(2)
    assert len(lines) == 5  # the five models of swe-agent-java
    assert lines[0].split()[:3] == ["doubao-pro-128k", "33.3", "90.0"]  # as `agentlens cohort`
