"""Walking a folder costs each file one `stat` (regular file? seen before?) and one look for the
run that reads it as a sub-agent, not one per question."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agentlens.formats import load
from agentlens.formats.load import iter_trace_paths
from agentlens.formats.stream import read_paths
from agentlens.process.cohort_runs import read_cohort
from tests.conftest import FORMATS

SESSIONS = FORMATS / "claude-code"  # real sessions in nested folders, sub-agent files among them


def test_each_walked_file_is_stat_ed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    link = tmp_path / "linked"
    link.symlink_to(FORMATS / "codex", target_is_directory=True)
    asked: Counter[str] = Counter()
    stat = os.stat

    def counted(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        asked[os.fspath(path)] += 1
        return stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    repeats: list[Any] = []
    walked = [str(path) for path, *_ in iter_trace_paths([FORMATS / "codex", link], repeats)]
    monkeypatch.undo()
    assert len(walked) > 10 and len(repeats) == len(walked)  # every file, then each again
    assert {path: asked[path] for path in walked} == dict.fromkeys(walked, 1)


def test_a_walked_file_is_asked_once_which_run_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: Counter[str] = Counter()
    reader_of = load.reader_of

    def counted(path: Path) -> Path | None:
        asked[str(path)] += 1
        return reader_of(path)

    monkeypatch.setattr(load, "reader_of", counted)
    whole = read_paths([SESSIONS])
    with read_cohort([str(SESSIONS)]) as (summary, _):
        pass
    assert sum("a sub-agent, read inside" in line for line in whole.sidecars) == 2
    assert summary.sidecars == whole.sidecars
    assert asked and set(asked.values()) == {2}  # once by each read
