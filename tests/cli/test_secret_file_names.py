"""A trace file named by a secret (`ghp_….jsonl`, `sk-ant-….json`) is still named in the batch's
lines and in what the store keeps, with only the secret part masked (`cli/_app.say`,
`store/sql.py`), unless `--no-redact`. The files are real traces from ../shared/data, copied
under such names (and broken, for the `failed:` lines)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.cli.conftest import Run
from tests.conftest import BENCH, FORMATS

SESSION = FORMATS / "claude-code" / "marot-spotter" / "short.jsonl"
BENCH_RUN = next((BENCH / "trajectories" / "psf__requests-1724").glob("*.json"))
GITHUB = "ghp_" + "aB3" * 12
ANTHROPIC = "sk-ant-api03-" + "A" * 20 + "b" * 20 + "C9" * 10


def _secret_named(folder: Path) -> Path:
    """A broken JSONL session and a cut JSON trace named by secrets, and a whole session named
    by a secret after a prefix."""
    folder.mkdir()
    lines = SESSION.read_bytes().splitlines(keepends=True)
    broken = [*lines[:3], b'{"type": \n', *lines[4:]]  # line 4 broken, not the last: fails
    (folder / f"{GITHUB}.jsonl").write_bytes(b"".join(broken))
    whole = BENCH_RUN.read_bytes()
    (folder / f"{ANTHROPIC}.json").write_bytes(whole[: len(whole) // 2])
    (folder / f"session-{GITHUB}.jsonl").write_bytes(SESSION.read_bytes())
    return folder


def test_failed_lines_mask_only_the_secret_in_a_file_name(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    folder = _secret_named(tmp_path / "runs")
    result = run_cli("inspect", str(folder))
    assert result.code == 1
    assert GITHUB not in result.err and ANTHROPIC not in result.err
    assert f"failed: {folder}/[REDACTED:github-token].jsonl [claude-code]: " in result.err
    assert f"failed: {folder}/[REDACTED:openai-key].json [agentlens-bench]: " in result.err
    raw = run_cli("--no-redact", "inspect", str(folder))
    assert f"failed: {folder}/{GITHUB}.jsonl [claude-code]: " in raw.err


def test_the_store_keeps_a_secret_file_name_masked(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    folder = _secret_named(tmp_path / "runs")
    store, out = f"sqlite:///{tmp_path / 'store.db'}", tmp_path / "report.html"
    session = folder / f"session-{GITHUB}.jsonl"
    assert run_cli("store", "import", str(session), "--store", store).code == 0
    assert run_cli("report", "--kind", "import", "--store", store, "-o", str(out)).code == 0
    listed = run_cli("store", "runs", "--store", store)
    html = out.read_text()
    assert GITHUB not in html and GITHUB not in listed.out
    assert f"{folder}/session-[REDACTED:github-token].jsonl" in html


def test_a_file_named_by_a_secret_is_not_named_whole_as_the_file_read(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """Found by attack: the masked source path differed from the file read, so the batch set
    `read_from` to the file's whole name, key and all, which `inspect --json` and every export
    (`convert --to jsonl`) wrote out. A file that is its own source has no `read_from`."""
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / f"session-{GITHUB}.jsonl").write_bytes(SESSION.read_bytes())
    shown = run_cli("inspect", str(folder), "--json")
    out = tmp_path / "out"
    converted = run_cli("convert", str(folder), "--to", "jsonl", "-o", str(out))
    assert shown.code == 0 and converted.code == 0, (shown.err, converted.err)
    written = "".join(path.read_text() for path in out.rglob("*") if path.is_file())
    assert GITHUB not in shown.out and GITHUB not in written
    assert '"read_from":null' in shown.out
