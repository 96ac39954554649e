from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from agentlens.errors import AgentLensError
from agentlens.verification.isolation import Isolation
from agentlens.verification.sandbox import scratch_copy


def test_scratch_copy_links_top_level_node_modules_and_copies_the_rest(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "node_modules" / "jest").mkdir(parents=True)
    (repo / "node_modules" / "jest" / "index.js").write_text("module.exports = 1\n")
    (repo / "pkg" / "node_modules").mkdir(parents=True)
    (repo / "pkg" / "node_modules" / "x.js").write_text("x\n")
    (repo / "pkg" / "__pycache__").mkdir()
    (repo / "pkg" / "__pycache__" / "m.pyc").write_bytes(b"\0")
    (repo / "pkg" / "m.py").write_text("print(1)\n")
    with scratch_copy(repo) as scratch:
        copy = scratch.path
        top = copy / "node_modules"
        assert top.is_symlink() and top.resolve() == (repo / "node_modules").resolve()
        nested = copy / "pkg" / "node_modules"
        assert nested.is_dir() and not nested.is_symlink()
        assert (nested / "x.js").read_text() == "x\n"
        assert not (copy / "pkg" / "__pycache__").exists()
        assert (copy / "pkg" / "m.py").read_text() == "print(1)\n"
        (copy / "pkg" / "m.py").write_text("edited\n")
    assert (repo / "pkg" / "m.py").read_text() == "print(1)\n"
    assert not copy.exists()


def test_a_repo_holding_the_temporary_folder_is_copied_without_its_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`agentlens verify scenario.yaml --repo /tmp` copied /tmp into /tmp/agentlens-verify-…/repo,
    walking into that copy as it grew: 13 GB of nested copies in ten minutes, never finishing."""
    repo = tmp_path / "repo"
    (repo / "calc").mkdir(parents=True)
    (repo / "calc" / "ops.py").write_text("def sub(a, b):\n    return a - b\n")
    monkeypatch.setattr(tempfile, "tempdir", str(repo))  # TMPDIR inside the repository
    with scratch_copy(repo) as scratch:
        copy = scratch.path
        copied = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*"))
        assert copied == ["calc", "calc/ops.py"]


def test_an_unknown_sandbox_setting_is_named_as_text_not_a_python_list() -> None:
    """A scenario's misspelt `sandbox:` key said `unknown sandbox setting(s) ['memry_mb'];
    known: network, ['cpu_s', …]`: a Python list and a `(s)` in a user's error line."""
    with pytest.raises(AgentLensError) as raised:
        Isolation().with_overrides({"memry_mb": 512})
    said = str(raised.value)
    assert said.startswith("unknown sandbox setting memry_mb; known: network, ")
    assert "[" not in said and "'" not in said
