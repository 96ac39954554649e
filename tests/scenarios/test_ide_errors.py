"""IDE errors (spec §4.2, §5.2): ruff's error rules on the changed Python files, up to five per
file with seed 42, shown to the simulated user after each turn and to the judge for the end
state. Real ruff, real git workspaces and a real agent process throughout."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from agentlens.errors import ConfigError
from agentlens.providers import LLMClient
from agentlens.providers.retry import RetryPolicy
from agentlens.providers.types import ChatResponse
from agentlens.reviews.judge.compact import compact
from agentlens.reviews.judge.prompt import build_messages
from agentlens.reviews.scenario_evidence import scenario_context
from agentlens.scenarios import Fold, FoldResult, RunSettings, load_persona, run_fold
from agentlens.scenarios.agents import agent_factory
from agentlens.scenarios.ide_errors import IdeReport, check_mode, ide_errors
from agentlens.scenarios.scenario import Scenario, load_scenario
from agentlens.scenarios.simulated_user import IDE_NOTE, IDE_POINTER
from tests.scenarios.conftest import scripted
from tests.scenarios.helpers import Scripted

pytestmark = pytest.mark.skipif(  # on CI a missing ruff fails instead
    shutil.which("ruff") is None and not os.environ.get("CI"), reason="needs ruff (dev extra)"
)
FINDING = re.compile(r"^(\S+):(\d+):(\d+): (\S+) (.*)$", re.MULTILINE)


def run_two_turns(
    scenario: Scenario, project: Path, out: Path, outside: Path
) -> tuple[FoldResult, Scripted]:
    provider = Scripted([ChatResponse(text="Add helpers."), ChatResponse(text="Fix ops.py.")] * 2)
    fold = Fold([replace(scenario, max_steps=3)], [load_persona("default")], attempts=1)
    settings = RunSettings(
        make_agent=agent_factory(scripted("ideerr", str(outside))),
        simulator=LLMClient(provider, retry=RetryPolicy(max_attempts=1)),
        out=out,
        project=project,
    )
    return asyncio.run(run_fold(fold, settings)), provider


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside.py"
    path.write_text("x = not_in_the_project\n")
    return path


def test_each_turn_shows_the_errors_of_the_changed_files_and_the_judge_the_last(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path, outside: Path
) -> None:
    result, provider = run_two_turns(calc_scenario, calc_project, tmp_path / "out", outside)
    session = result.sessions[0]
    first, second = (str(r.messages[-1]["content"]) for r in provider.requests[1:3])
    shown = FINDING.findall(_block(first))
    by_file = {name: [f for f in shown if f[0] == name] for name in {f[0] for f in shown}}
    assert set(by_file) == {"calc/extra.py", "calc/ops.py"}  # not note.md, not the symlink
    assert len(by_file["calc/extra.py"]) == 5  # five of its seven
    assert {f[4] for f in by_file["calc/extra.py"]} < {
        f"Undefined name `undefined_{i}`" for i in range(7)
    }
    assert [(f[3], f[4]) for f in by_file["calc/ops.py"]] == [
        ("F821", "Undefined name `missing_name`")
    ]
    assert shown == sorted(shown, key=lambda f: (f[0], int(f[1]), int(f[2])))  # file order
    assert FINDING.findall(_block(second)) == by_file["calc/extra.py"]  # ops.py is fixed
    earlier = [str(m["content"]) for m in provider.requests[2].messages[1:-1]]
    assert any(IDE_POINTER in text for text in earlier)  # the stale turn's errors are dropped
    assert not any(_block(first) in text for text in earlier)
    assert IDE_NOTE in str(provider.requests[0].messages[0]["content"])

    traj = session.trajectory
    assert traj.metadata["ide_errors"]["files"] == 2
    ctx = scenario_context(traj)
    assert ctx is not None and ctx.ide_errors == _block(second)
    prompt = build_messages(traj, "EndResult", compact(traj, 4000), ctx)[1]["content"]
    assert f"IDE errors (up to 5 per changed file):\n{_block(second)}" in prompt


def test_the_draw_of_five_is_the_same_every_run(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path, outside: Path
) -> None:
    views = []
    for name in ("a", "b"):
        _, provider = run_two_turns(calc_scenario, calc_project, tmp_path / name, outside)
        views.append(_block(str(provider.requests[1].messages[-1]["content"])))
    assert views[0] == views[1]


def test_none_shows_no_ide_errors_anywhere(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path, outside: Path
) -> None:
    scenario = replace(calc_scenario, ide_errors="none")
    result, provider = run_two_turns(scenario, calc_project, tmp_path / "out", outside)
    texts = [str(m["content"]) for r in provider.requests for m in r.messages]
    assert not any("<ide_errors>" in t or IDE_NOTE in t for t in texts)
    traj = result.sessions[0].trajectory
    assert "ide_errors" not in traj.metadata
    ctx = scenario_context(traj)
    assert ctx is not None and ctx.ide_errors is None


def test_a_clean_change_says_no_errors(tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text("import os\n")  # unused import: style, not an error
    report = ide_errors(tmp_path, ["clean.py", "README.md", "gone.py"], "auto")
    assert report is not None and report.render() == "(no errors)" and report.files == 1


def test_the_project_ruff_config_neither_hides_errors_nor_adds_style(tmp_path: Path) -> None:
    config = '[tool.ruff.lint]\nextend-select = ["ALL"]\nper-file-ignores = {"*.py" = ["F821"]}\n'
    (tmp_path / "pyproject.toml").write_text(config)
    (tmp_path / "a.py").write_text("import os\nx = y\n")
    report = ide_errors(tmp_path, ["a.py"], "auto")
    assert report is not None and report.render() == "a.py:2:5: F821 Undefined name `y`"


def test_a_syntax_error_is_an_ide_error(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    report = ide_errors(tmp_path, ["broken.py"], "ruff")
    assert report is not None
    assert {e.code for e in report.errors["broken.py"]} == {"invalid-syntax"}


def test_without_ruff_auto_says_why_and_ruff_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.py").write_text("x = y\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    report = ide_errors(tmp_path, ["a.py"], "auto")
    assert report is not None
    assert report.render() == "(no IDE errors available: ruff is not installed (pip install ruff))"
    with pytest.raises(ConfigError, match=r"scenario s: ide_errors 'ruff' needs ruff"):
        check_mode("ruff", "scenario s")
    assert check_mode("auto", "scenario s") == "auto"


def test_ruff_beside_the_running_python_is_found_off_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A virtualenv's `agentlens` run without activating the virtualenv."""
    beside = Path(sys.executable).parent / "ruff"  # the real binary, not a pyenv shim script
    ruff = str(beside) if beside.is_file() else shutil.which("ruff")
    assert ruff is not None
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "ruff").symlink_to(Path(ruff).resolve())
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python"))
    (tmp_path / "a.py").write_text("x = y\n")
    report = ide_errors(tmp_path, ["a.py"], "ruff")
    assert report is not None and report.render() == "a.py:1:5: F821 Undefined name `y`"


def test_a_saved_report_reads_back_and_damaged_entries_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = y\nz = w\n")
    report = ide_errors(tmp_path, ["a.py"], "auto")
    assert report is not None
    assert IdeReport.from_dict(report.to_dict()).render() == report.render()
    damaged = {"files": "x", "errors": {"a.py": [1, {"line": True}], "b.py": "?"}}
    assert IdeReport.from_dict(damaged).render() == "a.py:0:0: error "


def test_an_unknown_mode_in_a_scenario_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"verifiers": [], "ide_errors": "intellij"}')
    with pytest.raises(ConfigError, match=r"config.json: ide_errors must be one of auto, ruff"):
        load_scenario(path)


def _block(view: str) -> str:
    return view.split("<ide_errors>\n", 1)[1].split("\n</ide_errors>", 1)[0]
