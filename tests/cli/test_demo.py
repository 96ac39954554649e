from __future__ import annotations

import hashlib
import http.server
import io
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rich.console import Console

from agentlens.demo.tour import SECTIONS, run_demo
from agentlens.errors import ConfigError
from agentlens.release import DownloadError, Release, ensure_release
from tests.conftest import BENCH

TASK = "psf__requests-1724"


def test_demo_summarises_the_dev_traces(run_cli: Callable[..., object], tmp_path: Path) -> None:
    traces = sorted((BENCH / "trajectories").glob("*/*.json"))
    passed = sum("-pass-" in p.name for p in traces)
    result = run_cli("demo", "--data", str(BENCH), "--out", str(tmp_path))
    out = result.out  # type: ignore[attr-defined]
    assert result.code == 0, result.err  # type: ignore[attr-defined]
    assert f"read {len(traces)} files, {len(traces)} trajectories" in out
    assert f"│ passed  │ file         │ {passed}" in out
    assert f"│ failed  │ file         │ {len(traces) - passed}" in out
    for name in SECTIONS:
        assert name in out
    # the default profile's validity, flagged as in-sample (it was fitted on these tasks)
    assert "in-sample: 9 of these 9 tasks" in " ".join(
        out.split("Validity of calibrated")[1].split()
    )
    _check_store(tmp_path, traces, out)


def _check_store(out: Path, traces: list[Path], printed: str) -> None:
    """The demo keeps every trace and the score run in its store, and reports the score run."""
    import re

    from agentlens.store import open_store

    (scored_count,) = re.findall(r"(\d+) runs scored \(profile calibrated, the default;", printed)
    with open_store(str(out / "results.db")) as store:
        imported, scored = (store.runs(kind=k) for k in ("import", "score"))
        assert store.stats()["trajectories"] == len(traces)
        assert imported[0].n_records == len(traces)
        assert scored[0].n_records == int(scored_count)
        assert scored[0].settings["profile"] == "calibrated"  # the default, as printed
        assert {r.outcome for r in store.records(scored[0].id)} == {"passed", "failed"}
        assert scored[0].id[:8] in (out / "report.html").read_text()


def test_a_failing_section_is_reported_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sections = {"broken": "agentlens.demo.tour:no_such_section", **SECTIONS}
    monkeypatch.setattr("agentlens.demo.tour.SECTIONS", sections)
    console = Console(record=True, width=200)
    assert run_demo(BENCH / "trajectories" / TASK, console, out=str(tmp_path)) == 1
    text = console.export_text()
    assert "section 'broken' failed: internal error (AttributeError: " in text  # a bug of ours
    assert "steps by category" in text


def _refuses(ctx: object) -> None:
    raise ConfigError("the local model file is missing")


def test_a_section_stopped_by_a_user_error_says_only_its_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """It printed the exception's class name ("SandboxUnavailableError: …") before its message."""
    monkeypatch.setattr("agentlens.demo.tour.SECTIONS", {"refusing": f"{__name__}:_refuses"})
    console = Console(record=True, width=200)
    assert run_demo(BENCH / "trajectories" / TASK, console, out=str(tmp_path)) == 1
    assert "section 'refusing' failed: the local model file is missing" in console.export_text()


def test_the_tokens_table_counts_the_file_totals_of_swe_agent_runs(tmp_path: Path) -> None:
    """`agentlens demo --data ../shared/data/swe-agent-java` showed 0 tokens for every outcome:
    SWE-agent keeps tokens only as file totals (`model_stats`), not per step."""
    from agentlens.formats.stream import read_paths

    java = BENCH.parent / "swe-agent-java"
    passed = [t for t in read_paths([java]).trajectories if t.outcome.status == "passed"]
    prompt = sum(t.reported_usage.prompt_tokens for t in passed if t.reported_usage)
    assert prompt > 0
    console = Console(record=True, width=200)
    assert run_demo(java, console, ("tokens",), out=str(tmp_path)) == 0
    row = next(line for line in console.export_text().splitlines() if "│ passed" in line)
    assert [cell.strip() for cell in row.split("│")][1:4] == [
        "passed",
        str(len(passed)),
        f"{prompt:,}",
    ]


def test_the_store_line_says_why_it_holds_fewer_step_rows_than_steps(tmp_path: Path) -> None:
    """`stored 399 trajectories (10,452 step rows for 10,841 steps)` left a user wondering where
    389 steps went: steps two runs share (a system prompt, a task message) are kept once."""
    from agentlens.store import open_store

    java = BENCH.parent / "swe-agent-java"
    console = Console(file=io.StringIO(), width=300)
    assert run_demo(java, console, ("results store",), out=str(tmp_path)) == 0
    with open_store(str(tmp_path / "results.db")) as store:
        stats = store.stats()
    shared = stats["steps_referenced"] - stats["steps"]
    assert shared > 0
    expected = (
        f"({stats['steps_referenced']:,} steps in {stats['steps']:,} step rows: "
        f"{shared:,} shared steps kept once)"
    )
    assert expected in console.file.getvalue()  # type: ignore[attr-defined]


# The release download, against a real local HTTP server serving a zip built here.


def _release_zip(traces: list[Path], hostile: bool = False) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        root = "agentlens-app-0123456/agentlens-bench"
        zipped.writestr("agentlens-app-0123456/README.md", "repository readme, not extracted")
        for trace in traces:
            zipped.write(trace, f"{root}/trajectories/{trace.parent.name}/{trace.name}")
        zipped.write(BENCH / "annotations" / "tasks.csv", f"{root}/annotations/tasks.csv")
        zipped.writestr(f"{root}/analysis/x_report.json", "{}")
        if hostile:
            zipped.writestr(f"{root}/trajectories/../../../escaped.txt", "must not be written")
    return buffer.getvalue()


class _Server:
    def __init__(self, body: bytes, *, lie_about_length: bool = False) -> None:
        self.body = body
        self.requests = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests += 1
                self.send_response(200)
                length = len(outer.body) + (1000 if lie_about_length else 0)
                self.send_header("Content-Length", str(length))
                self.end_headers()
                self.wfile.write(outer.body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/release.zip"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def traces() -> list[Path]:
    return sorted((BENCH / "trajectories" / TASK).glob("*.json"))[:6]


@pytest.fixture
def server(traces: list[Path]) -> Iterator[_Server]:
    server = _Server(_release_zip(traces, hostile=True))
    yield server
    server.close()


def _release(url: str, traces: list[Path], checksum: str | None = None) -> Release:
    digest = hashlib.sha256((BENCH / "annotations" / "tasks.csv").read_bytes()).hexdigest()
    return Release(
        url=url,
        name="bench-test",
        checksums={"annotations/tasks.csv": checksum or digest},
        trajectories=len(traces),
    )


def test_release_is_downloaded_checked_extracted_and_cached(
    tmp_path: Path, server: _Server, traces: list[Path]
) -> None:
    seen: list[tuple[int, int | None]] = []
    release = _release(server.url, traces)
    folder = ensure_release(release, cache=tmp_path, progress=lambda d, t: seen.append((d, t)))
    extracted = sorted((folder / "trajectories" / TASK).glob("*.json"))
    assert [p.name for p in extracted] == [p.name for p in traces]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(extracted, traces, strict=True))
    assert not (folder / "analysis").exists()  # only the kept folders are extracted
    assert not list(tmp_path.rglob("escaped.txt"))  # the `..` member was refused
    assert seen[-1][0] == seen[-1][1]  # the progress callback saw every byte of a known total
    assert ensure_release(release, cache=tmp_path) == folder
    assert server.requests == 1  # the second call used the cache
    console = Console(record=True, width=200)
    assert run_demo(folder, console) == 0
    assert f"read {len(traces)} files" in console.export_text()


def test_a_bad_checksum_leaves_nothing_in_the_cache(
    tmp_path: Path, server: _Server, traces: list[Path]
) -> None:
    with pytest.raises(DownloadError, match="SHA-256"):
        ensure_release(_release(server.url, traces, checksum="0" * 64), cache=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == []


def test_a_short_transfer_is_an_error(tmp_path: Path, traces: list[Path]) -> None:
    server = _Server(_release_zip(traces), lie_about_length=True)
    try:
        with pytest.raises(DownloadError):
            ensure_release(_release(server.url, traces), cache=tmp_path)
    finally:
        server.close()
    assert [p.name for p in tmp_path.iterdir()] == []


def test_an_unreachable_server_names_the_fix(tmp_path: Path, traces: list[Path]) -> None:
    release = _release("http://127.0.0.1:9/nothing.zip", traces)
    with pytest.raises(DownloadError, match="--data DIR"):
        ensure_release(release, cache=tmp_path, timeout=5)


def test_cache_dir_honours_agentlens_cache_then_xdg(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from agentlens.release import cache_dir

    monkeypatch.setenv("AGENTLENS_CACHE", str(tmp_path / "a"))
    assert cache_dir() == tmp_path / "a"
    monkeypatch.delenv("AGENTLENS_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "agentlens"


def test_demo_without_local_data_downloads_into_the_cache(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    server: _Server,
    traces: list[Path],
    run_cli: Callable[..., object],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("agentlens.demo.tour.REPO", tmp_path / "no-repo")
    monkeypatch.setattr("agentlens.demo.tour.AGENTLENS_BENCH", _release(server.url, traces))
    monkeypatch.setenv("AGENTLENS_CACHE", str(tmp_path / "cache"))
    result = run_cli("demo")
    assert result.code == 0, result.err  # type: ignore[attr-defined]
    assert f"read {len(traces)} files" in result.out  # type: ignore[attr-defined]
    assert (tmp_path / "cache" / "bench-test" / ".complete").is_file()
    assert server.requests == 1


def test_an_unknown_section_is_a_usage_error(run_cli: Callable[..., object]) -> None:
    """`--section bogus` once ran no section at all and exited 0; it now names the sections."""
    result = run_cli("demo", "--data", str(BENCH), "--section", "bogus")
    assert result.code == 2  # type: ignore[attr-defined]
    err = result.err  # type: ignore[attr-defined]
    assert "bogus" in err and "process scoring" in err and "Traceback" not in err


def test_the_demo_names_a_task_it_cannot_score(tmp_path: Path) -> None:
    """astropy__astropy-13236 has 3 passing runs, fewer than the 5 donors the protocol needs:
    the demo's count of scored runs once left its 35 runs out without a word. The count names
    the protocol: `agentlens cohort`, leave-one-out by default, tiers the same runs otherwise."""
    data = tmp_path / "data" / "trajectories"
    data.mkdir(parents=True)
    for task in ("astropy__astropy-13236", TASK):
        (data / task).mkdir()
        for trace in (BENCH / "trajectories" / task).glob("*.json"):
            (data / task / trace.name).symlink_to(trace)
    console = Console(file=io.StringIO(), width=200)
    assert run_demo(tmp_path / "data", console, ("process scoring",)) == 0
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert (
        "1 task, 5 donors, 32 runs scored (profile calibrated, the default; protocol "
        "agentlens-bench, as `agentlens cohort --protocol agentlens-bench`)"
    ) in text
    assert "not scored: astropy__astropy-13236: 3 passing, 32 failing" in text
