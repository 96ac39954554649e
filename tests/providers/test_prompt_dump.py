"""`--dump-prompts DIR` writes every prompt under DIR, one folder per trajectory, whatever the
trajectory's id (the real Gemini CLI session, its `sessionId` set by the test)."""

from __future__ import annotations

from pathlib import Path

from agentlens.cli import main
from tests.cli.test_convert import gemini_session

JUDGE = "openai-compatible:http://127.0.0.1:9/v1#m"  # never called: the prompts are only dumped


def test_a_session_id_of_dots_writes_no_prompt_outside_the_folder(tmp_path: Path) -> None:
    """A session id `..` made the trajectory's folder DIR/..: the five judge prompts were
    written beside DIR, outside the folder the user named."""
    trace = gemini_session(tmp_path / "in" / "session.jsonl", "..")
    out = tmp_path / "dumps" / "prompts"
    assert main(["review", str(trace), "--judge", JUDGE, "--dump-prompts", str(out)]) == 0
    assert sorted(p.name for p in (tmp_path / "dumps").iterdir()) == ["prompts"]
    assert [p.relative_to(out).parent.as_posix() for p in out.rglob("*.json")] == ["trajectory"] * 5


def test_long_session_ids_get_a_folder_each(tmp_path: Path) -> None:
    """A 300-character id was a folder name too long for the file system (`error: …: File name
    too long`, exit 2)."""
    ids = ["s" * 300 + "-1", "s" * 300 + "-2"]
    traces = [gemini_session(tmp_path / "in" / f"{i}.jsonl", id_) for i, id_ in enumerate(ids)]
    out = tmp_path / "prompts"
    assert main(["review", *map(str, traces), "--judge", JUDGE, "--dump-prompts", str(out)]) == 0
    assert len(list(out.iterdir())) == 2 and len(list(out.rglob("*.json"))) == 10
