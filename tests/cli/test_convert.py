from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlens.formats import read_path
from agentlens.formats.jsonl import load_jsonl
from tests.conftest import BENCH, FORMATS, needed

TASK_DIR = BENCH / "trajectories" / "psf__requests-1724"
HARBOR = (
    FORMATS / "atif-harbor-golden" / "tests" / "golden" / "openhands" / "hello-world.traces.json"
)


def test_convert_to_jsonl_round_trips(tmp_path: Path, run_cli: Callable[..., object]) -> None:
    sources = [*sorted(TASK_DIR.glob("*.json")), HARBOR]
    result = run_cli("convert", "--to", "jsonl", "-o", str(tmp_path), *map(str, sources))
    assert result.code == 0, result.err  # type: ignore[attr-defined]
    outputs = sorted(tmp_path.glob("*.jsonl"))
    assert len(outputs) == len(sources)  # one file per input file
    harbor_out = tmp_path / "hello-world.traces.jsonl"
    assert len(load_jsonl(harbor_out)) == len(json.loads(HARBOR.read_bytes()))
    for source in sources[:-1]:
        (original,) = read_path(source)
        (copy,) = load_jsonl(tmp_path / f"{source.stem}.jsonl")
        assert copy.steps == original.steps
        assert copy.outcome == original.outcome


def test_converted_jsonl_is_detected_by_inspect(
    tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    sources = sorted(TASK_DIR.glob("*.json"))[:3]
    run_cli("convert", "--to", "jsonl", "-o", str(tmp_path), *map(str, sources))
    again = run_cli("inspect", "--json", str(tmp_path))
    rows = [json.loads(line) for line in again.out.splitlines()]  # type: ignore[attr-defined]
    assert again.code == 0  # type: ignore[attr-defined]
    # A converted trajectory keeps the source it was first read from.
    assert sorted(r["path"] for r in rows) == sorted(map(str, sources))
    assert {r["format"] for r in rows} == {"agentlens-bench"}


def test_convert_refuses_to_overwrite(tmp_path: Path, run_cli: Callable[..., object]) -> None:
    source = str(next(TASK_DIR.glob("*.json")))
    assert run_cli("convert", "--to", "jsonl", "-o", str(tmp_path), source).code == 0  # type: ignore[attr-defined]
    second = run_cli("convert", "--to", "jsonl", "-o", str(tmp_path), source)
    assert second.code == 2  # type: ignore[attr-defined]
    assert "--force" in second.err  # type: ignore[attr-defined]
    forced = run_cli("convert", "--to", "jsonl", "--force", "-o", str(tmp_path), source)
    assert forced.code == 0  # type: ignore[attr-defined]


def test_convert_to_atif_writes_one_file_per_trajectory(
    tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    sources = sorted(TASK_DIR.glob("*.json"))[:5]
    result = run_cli("convert", "--to", "atif", "-o", str(tmp_path), *map(str, sources))
    assert result.code == 0, result.err  # type: ignore[attr-defined]
    outputs = sorted(tmp_path.glob("*.json"))
    assert len(outputs) == len(sources)
    for source in sources:
        (original,) = read_path(source)
        (back,) = read_path(tmp_path / source.name)
        assert back.source.format == "atif"
        assert [s.tool_name for s in back.tool_steps] == [s.tool_name for s in original.tool_steps]


def test_every_target_names_its_files_after_the_inputs(
    tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    """ATIF files were named by session id (`x_981c87cb-….json`) while jsonl and otel took the
    input's name. All three take it now; a second input of the same name gets `-2`, said."""
    session = FORMATS / "gemini-cli" / "session-2025-10-27T19-55-981c87cb.json"
    for folder in ("x", "y"):
        (tmp_path / "in" / folder).mkdir(parents=True)
        (tmp_path / "in" / folder / "s.json").write_bytes(session.read_bytes())
    suffixes = {"atif": ".json", "jsonl": ".jsonl", "otel": ".otlp.json"}
    for target, suffix in suffixes.items():
        out = tmp_path / target
        result = run_cli("convert", str(tmp_path / "in"), "--to", target, "-o", str(out))
        assert result.code == 0, result.err  # type: ignore[attr-defined]
        assert sorted(p.name for p in out.iterdir()) == [f"s-2{suffix}", f"s{suffix}"]
        note = f"s{suffix} is another input's, so it is written as s-2{suffix}"
        assert note in " ".join(result.err.split())  # type: ignore[attr-defined]
    several = FORMATS / "inspect-ai" / "2025-05-12T20-28-13-04-00_popularity.json"
    result = run_cli("convert", str(several), "--to", "atif", "-o", str(tmp_path / "several"))
    assert result.code == 0, result.err  # type: ignore[attr-defined]
    stem = "2025-05-12T20-28-13-04-00_popularity"
    names = sorted(p.name for p in (tmp_path / "several").iterdir())
    assert names == [f"{stem}.{n}.json" for n in (1, 2, 3)]


GEMINI = FORMATS / "gemini-cli-jsonl" / "session.jsonl"


def gemini_session(path: Path, session_id: str) -> Path:
    """The real Gemini CLI session, its header's `sessionId` set to `session_id`."""
    header, *rest = GEMINI.read_bytes().splitlines(keepends=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(json.dumps(json.loads(header) | {"sessionId": session_id}).encode() + b"\n")
    with path.open("ab") as handle:
        handle.writelines(rest)
    return path


def test_convert_to_atif_names_a_file_for_an_input_name_too_long_to_be_one(
    tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    """An ATIF file is named after its input; a name near the 255 bytes a file name may take
    (a hostile folder's) is cut, with a digest of the whole name, so the write does not stop with
    `File name too long` and two long names that share a beginning still get two files."""
    names = ["s" * 240 + "-1.jsonl", "s" * 240 + "-2.jsonl"]
    for number, name in enumerate(names):
        gemini_session(tmp_path / "in" / name, f"session-{number}")
    out = tmp_path / "out"
    result = run_cli("convert", "--to", "atif", "-o", str(out), str(tmp_path / "in"))
    assert result.code == 0, result.err  # type: ignore[attr-defined]
    written = sorted(out.iterdir())
    assert len(written) == 2 and all(len(path.name) < 255 for path in written)
    assert all(path.name.startswith("s" * 150) for path in written)
    found = sorted(json.loads(path.read_bytes())["session_id"] for path in written)
    assert found == ["session-0", "session-1"]


def test_hf_without_datasets_stops_before_making_the_folder(
    tmp_path: Path, run_cli: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the hf extra, `convert --to hf -o ds` left an empty `ds/` behind its error."""
    monkeypatch.setitem(sys.modules, "datasets", None)  # as if not installed
    out = tmp_path / "ds"
    result = run_cli("convert", str(TASK_DIR), "--to", "hf", "-o", str(out))
    assert result.code == 2  # type: ignore[attr-defined]
    assert "pip install 'agentlens[hf]'" in result.err  # type: ignore[attr-defined]
    assert "Traceback" not in result.err  # type: ignore[attr-defined]
    assert list(tmp_path.iterdir()) == []


def test_hf_of_no_trajectory_makes_no_folder(
    tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    needed("datasets", "pip install 'agentlens[hf]'")
    out = tmp_path / "ds"
    result = run_cli("convert", str(tmp_path / "no-such-trace.json"), "--to", "hf", "-o", str(out))
    assert "no dataset written" in result.out  # type: ignore[attr-defined]
    assert not out.exists()
