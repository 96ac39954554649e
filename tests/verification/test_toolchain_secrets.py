"""Toolchain folders of the home directory are shown to sandboxed commands read-only (cargo,
Maven, ...), but the credentials kept in them are not: a crates.io token, Maven's master
password. The rest of the folder stays readable, so builds still find their tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlens.verification.sandbox import run_command

TOKEN = "cio-token-of-the-host"


def test_credentials_in_toolchain_folders_are_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    files = {".cargo/credentials.toml": TOKEN, ".cargo/credentials": TOKEN,
             ".m2/settings-security.xml": TOKEN, ".cargo/env": "tools"}  # fmt: skip
    for rel, text in files.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    (home / ".cargo").chmod(0o755)
    (home / ".m2").chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "scratch" / "repo"
    work.mkdir(parents=True)
    paths = [str(home / rel) for rel in files]
    result = run_command(["sh", "-c", 'for f in "$@"; do cat "$f"; echo; done', "-", *paths],
                         work, timeout_s=60)  # fmt: skip
    assert TOKEN not in result.output
    assert "tools" in result.output  # the folder itself is there
