"""Walking a folder costs each file one `stat` (regular file? seen before?), not one per
question."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agentlens.formats.load import iter_trace_paths
from tests.conftest import FORMATS


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
