"""Hostile sibling files: the files a reader FOLLOWS beside the one it was given, and broken
Inspect `.eval` zips.

Each test copies a real main file and its real sibling into `tmp_path`, mutates the sibling
(structure-aware with `_mutate` for JSON/JSONL, byte-level for logs, CSVs and zips) and reads
the main file through the public path (`read_paths`, and `agentlens inspect`). Behaviour decided
per sibling:

- Claude Code sub-agent file (`<session>/subagents/agent-*.jsonl`) and ATIF
  `subagent_trajectory_ref` file: the parent is kept; a broken sub-agent file is left out and named
  in the parent's `metadata["warnings"]`.
- Harbor `result.json` (beside `agent/trajectory.json`): a broken or unscored one leaves the
  outcome unknown (it is optional metadata, not the trace).
- Outcome sidecars (`logs/<task>/run_instance.log`, `results/results.json`): the trace is read;
  an unreadable / non-JSON sidecar leaves the outcome as it was and adds one warning naming it.
- `--labels` CSV: the user named it, so a broken one is a one-line `ConfigError` naming the CSV
  (before any trace is read), never a traceback.
- Inspect `.eval` zip: the file itself is the trace, so corruption is a `TraceError` naming it;
  a member declaring more than `MAX_MEMBER_BYTES` is refused before it is inflated; nothing is
  ever extracted to disk.
"""

from __future__ import annotations

import io
import os
import shutil
import struct
import zipfile
from pathlib import Path

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlens.errors import AgentLensError, ConfigError
from agentlens.formats import inspect_ai
from agentlens.formats.load import ReadResult, read_path
from agentlens.formats.stream import read_paths
from agentlens.trajectory import Trajectory
from tests.conftest import DATA, FORMATS
from tests.formats import _mutate

# CI: 60 derandomised mutants per test. A longer random run by hand:
# `AGENTLENS_FUZZ_EXAMPLES=1000 python -m pytest -q tests/formats/test_fuzz_siblings.py`
LONG_RUN = int(os.environ.get("AGENTLENS_FUZZ_EXAMPLES", "0"))
FUZZ = settings(
    max_examples=LONG_RUN or 60,
    deadline=None,
    derandomize=not LONG_RUN,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

CLAUDE = FORMATS / "claude-code/marot-spotter"
CLAUDE_SUB = CLAUDE / "4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl"
ATIF = FORMATS / "atif-harbor-golden/tests/golden/terminus_2"
ATIF_MAIN = "hello-world-context-summarization.trajectory.json"
ATIF_SUB = "hello-world-context-summarization.trajectory.summarization-1-questions.json"
SWE_RUN = DATA / "swe-agent-java/20240825_SWE-agent_deepseek-coder-v2"
SWE_TASK = "googlecontainertools__jib-4035"


@st.composite
def byte_mutant(draw: st.DrawFn, data: bytes) -> bytes:
    """Truncate, flip bytes, or splice in junk (NUL, invalid UTF-8, a huge field)."""
    op = draw(st.sampled_from(["truncate", "flip", "insert"]))
    at = draw(st.integers(0, len(data)))
    if op == "truncate":
        return data[:at]
    if op == "flip":
        count = draw(st.integers(1, 8))
        out = bytearray(data)
        for i in draw(st.lists(st.integers(0, len(data) - 1), min_size=count, max_size=count)):
            out[i] ^= draw(st.integers(1, 255))
        return bytes(out)
    junk = draw(st.sampled_from([b"\x00", b"\xff\xfe\x80", b'"' * 3, b"x" * 200_000, b"\r\n,,\n"]))
    return data[:at] + junk + data[at:]


def json_mutant(path: Path) -> st.SearchStrategy[bytes]:
    parsed = _mutate.parse(path, path.read_bytes())
    return _mutate.mutant(parsed).map(lambda pair: pair[0])


def _only(result: ReadResult) -> Trajectory:
    assert not result.failures, [f.reason for f in result.failures]
    assert len(result.trajectories) == 1
    traj = result.trajectories[0]
    msgspec.json.decode(msgspec.json.encode(traj), type=Trajectory)  # fits the model
    return traj


def _warnings(traj: Trajectory) -> list[str]:
    return list(traj.metadata.get("warnings") or [])


# --- Claude Code sub-agent files -------------------------------------------------------------


@pytest.fixture
def claude_session(tmp_path: Path) -> tuple[Path, Path]:
    main = tmp_path / "session.jsonl"
    shutil.copyfile(CLAUDE / "short.jsonl", main)
    sub = tmp_path / "session/subagents/agent-fuzz.jsonl"
    sub.parent.mkdir(parents=True)
    shutil.copyfile(CLAUDE_SUB, sub)
    return main, sub


def test_claude_sub_agent_is_linked(claude_session: tuple[Path, Path]) -> None:
    main, _ = claude_session
    traj = _only(read_paths([main]))
    first = orjson.loads(CLAUDE_SUB.read_bytes().split(b"\n", 1)[0])
    assert [s.id for s in traj.subtrajectories] == [f"{first['sessionId']}/{first['agentId']}"]
    assert not _warnings(traj)


def _check_claude(main: Path, sub: Path) -> None:
    traj = _only(read_paths([main]))
    assert traj.source.path == str(main)
    kept = [s for s in traj.subtrajectories if s.source.path == str(sub)]
    named = [w for w in _warnings(traj) if str(sub) in w]
    if any("truncated" in s.metadata for s in kept):  # read up to its cut last line
        assert len(kept) == len(named) == 1 and "last line is incomplete" in named[0], named
    else:  # read whole, or skipped and named
        assert len(kept) + len(named) == 1, (kept, _warnings(traj))


@FUZZ
@given(data=st.data())
def test_claude_broken_sub_agent_keeps_parent(
    claude_session: tuple[Path, Path], data: st.DataObject
) -> None:
    main, sub = claude_session
    mutant = data.draw(
        st.one_of(json_mutant(CLAUDE_SUB), byte_mutant(CLAUDE_SUB.read_bytes())), label="sub"
    )
    sub.write_bytes(mutant)
    _check_claude(main, sub)


def test_claude_unreadable_sub_agent_keeps_parent(claude_session: tuple[Path, Path]) -> None:
    main, sub = claude_session
    sub.write_bytes(b"\xff\xfe not json at all\n")
    traj = _only(read_paths([main]))
    assert not traj.subtrajectories
    assert any(str(sub) in w for w in _warnings(traj))
    sub.unlink()
    sub.mkdir()  # a directory where the file should be: OSError on read
    assert not _only(read_paths([main])).subtrajectories


# --- ATIF subagent_trajectory_ref files and Harbor result.json -------------------------------


@pytest.fixture
def atif_run(tmp_path: Path) -> tuple[Path, Path]:
    for source in ATIF.glob("hello-world-context-summarization.trajectory*.json"):
        shutil.copyfile(source, tmp_path / source.name)
    return tmp_path / ATIF_MAIN, tmp_path / ATIF_SUB


def test_atif_refs_are_followed(atif_run: tuple[Path, Path]) -> None:
    main, sub = atif_run
    doc = orjson.loads(main.read_bytes())
    refs = {
        ref["trajectory_path"]
        for step in doc["steps"]
        for result in (step.get("observation") or {}).get("results") or []
        for ref in result.get("subagent_trajectory_ref") or []
    }
    traj = _only(read_paths([main]))
    assert len(traj.subtrajectories) == len(refs) == 3
    assert str(sub) in {s.source.path for s in traj.subtrajectories}


@FUZZ
@given(data=st.data())
def test_atif_broken_ref_keeps_parent(atif_run: tuple[Path, Path], data: st.DataObject) -> None:
    main, sub = atif_run
    source = ATIF / ATIF_SUB
    sub.write_bytes(data.draw(st.one_of(json_mutant(source), byte_mutant(source.read_bytes()))))
    traj = _only(read_paths([main]))
    kept = [s for s in traj.subtrajectories if s.source.path == str(sub)]
    named = [w for w in _warnings(traj) if str(sub) in w]
    if any("truncated" in s.metadata for s in kept):  # read up to its cut last line
        assert len(kept) == len(named) == 1 and "last line is incomplete" in named[0], named
    else:  # read whole, or skipped and named
        assert len(kept) + len(named) == 1, (kept, _warnings(traj))
    assert len(traj.subtrajectories) >= 2  # the other two refs are untouched


@pytest.fixture
def harbor_trial(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "trial/agent"
    agent.mkdir(parents=True)
    shutil.copyfile(ATIF / "hello-world-timeout.trajectory.json", agent / "trajectory.json")
    # no Harbor result.json is in the shared data: this one has the fields the reader uses
    result = tmp_path / "trial/result.json"
    result.write_bytes(
        orjson.dumps({"task_name": "hello-world", "verifier_result": {"rewards": {"reward": 1.0}}})
    )
    return agent / "trajectory.json", result


def test_harbor_result_gives_outcome(harbor_trial: tuple[Path, Path]) -> None:
    main, _ = harbor_trial
    traj = _only(read_paths([main]))
    assert (traj.outcome.status, traj.task_id) == ("passed", "hello-world")


@FUZZ
@given(data=st.data())
def test_harbor_broken_result_json(harbor_trial: tuple[Path, Path], data: st.DataObject) -> None:
    main, result = harbor_trial
    original = result.read_bytes()
    result.write_bytes(
        data.draw(st.one_of(json_mutant(result), byte_mutant(original)), label="result")
    )
    try:
        traj = _only(read_paths([main]))
    finally:
        result.write_bytes(original)
    assert traj.task_id is None or isinstance(traj.task_id, str)


# --- outcome sidecars: run_instance.log, results.json, --labels CSV --------------------------


@pytest.fixture
def swe_run(tmp_path: Path) -> tuple[Path, Path, Path]:
    trace = tmp_path / f"trajs/{SWE_TASK}.traj"
    log = tmp_path / f"logs/{SWE_TASK}/run_instance.log"
    report = tmp_path / "results/results.json"
    for target in (trace, log, report):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SWE_RUN / target.relative_to(tmp_path), target)
    return trace, log, report


def test_swe_sidecars_give_outcome(swe_run: tuple[Path, Path, Path]) -> None:
    trace, log, _ = swe_run
    verdict = log.read_text().rsplit(f"Result for {SWE_TASK}: resolved: ", 1)[1][:4]
    traj = _only(read_paths([trace]))
    assert traj.outcome.status == ("passed" if verdict == "True" else "failed")
    assert traj.outcome.source == "run_instance.log"


@FUZZ
@given(data=st.data())
def test_broken_run_instance_log(swe_run: tuple[Path, Path, Path], data: st.DataObject) -> None:
    trace, log, _ = swe_run
    log.write_bytes(
        data.draw(byte_mutant((SWE_RUN / f"logs/{SWE_TASK}/run_instance.log").read_bytes()))
    )
    traj = _only(read_paths([trace]))
    assert traj.outcome.status in ("passed", "failed", "unknown")


@FUZZ
@given(data=st.data())
def test_broken_results_json(swe_run: tuple[Path, Path, Path], data: st.DataObject) -> None:
    trace, log, report = swe_run
    log.unlink(missing_ok=True)  # so the report is what decides
    source = SWE_RUN / "results/results.json"
    report.write_bytes(data.draw(st.one_of(json_mutant(source), byte_mutant(source.read_bytes()))))
    traj = _only(read_paths([trace]))
    try:
        orjson.loads(report.read_bytes())
    except orjson.JSONDecodeError:
        assert traj.outcome.status == "unknown" or traj.outcome.source != "results.json"
        assert sum(str(report) in w for w in _warnings(traj)) == 1, _warnings(traj)


def test_non_json_results_json_warns_once_per_trace(swe_run: tuple[Path, Path, Path]) -> None:
    trace, log, report = swe_run
    log.unlink()
    report.write_bytes(b"{not json")
    second = trace.with_name("second.traj")
    shutil.copyfile(trace, second)
    result = read_paths([trace, second])
    assert len(result.trajectories) == 2
    for traj in result.trajectories:
        assert traj.outcome.status == "unknown"
        assert [w for w in _warnings(traj) if str(report) in w] == [
            w for w in _warnings(traj) if "outcome sidecar" in w
        ]
        assert len(_warnings(traj)) == 1


@pytest.mark.parametrize("session", ["x" * 300, "/etc", "..", "ü" * 150, "a\\..\\b"])
def test_hostile_ids_beside_a_logs_folder(tmp_path: Path, session: str) -> None:
    """Sidecar lookup builds `logs/<id>/run_instance.log` from ids the trace chose: a name too
    long for the file system, an absolute path or `..` must not crash the batch."""
    (tmp_path / "logs").mkdir()
    original = (CLAUDE / "short.jsonl").read_bytes()
    session_id = orjson.loads(original.split(b"\n", 1)[0]).get("sessionId") or next(
        orjson.loads(line)["sessionId"] for line in original.splitlines() if b'"sessionId"' in line
    )
    trace = tmp_path / "session.jsonl"
    trace.write_bytes(original.replace(session_id.encode(), orjson.dumps(session)[1:-1]))
    traj = _only(read_paths([trace]))
    assert traj.id == session and traj.outcome.status == "unknown"


@FUZZ
@given(data=st.data())
def test_broken_labels_csv(tmp_path: Path, data: st.DataObject) -> None:
    source = DATA / "formats/labels.csv"
    labels = tmp_path / "labels.csv"
    labels.write_bytes(data.draw(byte_mutant(source.read_bytes())))
    trace = CLAUDE / "short.jsonl"
    try:
        result = read_paths([trace], labels=[str(labels)])
    except ConfigError as exc:
        assert str(labels) in str(exc) and "\n" not in str(exc)
        return
    _only(result)


def test_cli_inspect_with_broken_sidecars(
    swe_run: tuple[Path, Path, Path],
    claude_session: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agentlens.cli import main as cli

    trace, log, report = swe_run
    log.write_bytes(b"\x00\xff" * 100)
    report.write_bytes(b"[[[")
    main, sub = claude_session
    sub.write_bytes(b"{oops\n")
    labels = tmp_path / "labels.csv"
    labels.write_bytes(b"path,label\n\xff\xfe,pass\n")
    assert cli(["inspect", str(trace), str(main)]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert cli(["inspect", str(trace), "--labels", str(labels)]) != 0
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert str(labels) in out.out + out.err


# --- Inspect .eval zips -----------------------------------------------------------------------

EVAL = FORMATS / "inspect-ai/log_read_sample.eval"


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, raw in members:
            archive.writestr(zipfile.ZipInfo(name), raw, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def _members() -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(EVAL) as archive:
        return [(n, archive.read(n)) for n in archive.namelist()]


def _read_eval(path: Path, data: bytes) -> list[Trajectory] | AgentLensError:
    path.write_bytes(data)
    try:
        return read_path(path)
    except AgentLensError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc), exc
        return exc


def test_eval_sample_reads(tmp_path: Path) -> None:
    samples = [n for n, _ in _members() if n.startswith("samples/")]
    assert len(_read_eval(tmp_path / "log.eval", EVAL.read_bytes())) == len(samples)  # type: ignore[arg-type]


@FUZZ
@given(data=st.data())
def test_eval_byte_corruption(tmp_path: Path, data: st.DataObject) -> None:
    raw = EVAL.read_bytes()
    directory = raw.rfind(b"PK\x01\x02")  # flips aimed at the central directory half the time
    tail = raw[:directory] + data.draw(byte_mutant(raw[directory:]))
    mutant = data.draw(st.sampled_from([tail, data.draw(byte_mutant(raw))]))
    result = _read_eval(tmp_path / "log.eval", mutant)
    if isinstance(result, list):
        for traj in result:
            msgspec.json.decode(msgspec.json.encode(traj), type=Trajectory)


@pytest.mark.parametrize("cut", [4, 30, 100, 0.5, 0.9, -22, -1])
def test_eval_truncated(tmp_path: Path, cut: float) -> None:
    raw = EVAL.read_bytes()
    end = int(len(raw) * cut) if isinstance(cut, float) else cut
    assert isinstance(_read_eval(tmp_path / "log.eval", raw[:end]), AgentLensError)


def test_eval_member_not_json(tmp_path: Path) -> None:
    members = [(n, b"\x00not json" if n.startswith("samples/") else r) for n, r in _members()]
    error = _read_eval(tmp_path / "log.eval", _zip(members))
    assert isinstance(error, AgentLensError) and "samples/" in str(error)


def test_eval_without_header(tmp_path: Path) -> None:
    members = [(n, r) for n, r in _members() if n != "header.json" and not n.startswith("_journal")]
    error = _read_eval(tmp_path / "log.eval", _zip(members))
    assert isinstance(error, AgentLensError) and "header.json" in str(error)


def test_eval_journal_only_header(tmp_path: Path) -> None:
    """A log still being written: `_journal/start.json` stands in for the header."""
    members = [(n, r) for n, r in _members() if n != "header.json"]
    if not any(n == "_journal/start.json" for n, _ in members):
        pytest.skip("sample has no journal")
    result = _read_eval(tmp_path / "log.eval", _zip(members))
    assert isinstance(result, list)


def test_eval_oversized_member_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inspect_ai, "MAX_MEMBER_BYTES", 1 << 20)
    bomb = b"{" + b" " * (4 << 20) + b"}"  # 4 MiB of JSON that deflates to a few KiB
    members = [*_members(), ("samples/bomb_epoch_1.json", bomb)]
    data = _zip(members)
    assert len(data) < 64 << 10
    error = _read_eval(tmp_path / "log.eval", data)
    assert isinstance(error, AgentLensError) and "samples/bomb_epoch_1.json" in str(error)


def test_eval_lying_declared_size(tmp_path: Path) -> None:
    """A member whose header declares 2**31 bytes: refused by the cap, never inflated."""
    data = bytearray(_zip(_members()))
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = (2**31).to_bytes(4, "little")  # uncompressed size
    result = _read_eval(tmp_path / "log.eval", bytes(data))
    assert isinstance(result, AgentLensError)


def test_eval_duplicate_members(tmp_path: Path) -> None:
    members = _members()
    sample = next((n, r) for n, r in members if n.startswith("samples/"))
    with pytest.warns(UserWarning, match="Duplicate name"):
        data = _zip([*members, (sample[0], b"[1, 2]"), ("header.json", b"{}")])
    result = _read_eval(tmp_path / "log.eval", data)
    if isinstance(result, list):
        for traj in result:
            msgspec.json.decode(msgspec.json.encode(traj), type=Trajectory)


def test_eval_path_traversal_names_write_nothing(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    sample = next(r for n, r in _members() if n.startswith("samples/"))
    hostile = ["samples/../../evil_epoch_1.json", "/abs/samples/x.json", "samples/..\\..\\win.json"]
    data = _zip([*_members(), *((name, sample) for name in hostile)])
    before = set(tmp_path.rglob("*"))
    cwd = os.getcwd()
    os.chdir(work)
    try:
        result = _read_eval(work / "log.eval", data)
    finally:
        os.chdir(cwd)
    assert set(tmp_path.rglob("*")) - before == {work / "log.eval"}
    assert isinstance(result, list) and result


@pytest.mark.parametrize(
    ("offset", "value"),
    [(6, b"\x54\x00"), (8, b"\x01\x00")],  # "version needed" 8.4; the "encrypted" flag bit
    ids=["version-needed", "encrypted-flag"],
)
def test_eval_central_directory_fields(tmp_path: Path, offset: int, value: bytes) -> None:
    """Found by the random fuzz run: zipfile raised NotImplementedError / RuntimeError."""
    data = bytearray(EVAL.read_bytes())
    for at in range(data.find(b"PK\x01\x02"), len(data)):
        if data[at : at + 4] == b"PK\x01\x02":
            data[at + offset : at + offset + 2] = value
    assert isinstance(_read_eval(tmp_path / "log.eval", bytes(data)), AgentLensError)


def test_eval_corrupt_lzma_member(tmp_path: Path) -> None:
    """Found by the coverage-guided fuzz run: a member stored with LZMA (a method zipfile reads)
    whose data is corrupt raised lzma.LZMAError, which not even `read_path` caught."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, raw in _members():
            archive.writestr(name, raw, zipfile.ZIP_LZMA)
    data = bytearray(out.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        header = archive.getinfo("header.json")
    name_length, extra_length = struct.unpack_from("<HH", data, header.header_offset + 26)
    body = header.header_offset + 30 + name_length + extra_length
    lzma_header = 9  # zipfile's 4-byte LZMA header and the 5 property bytes
    data[body + lzma_header : body + header.compress_size] = b"\xff" * (
        header.compress_size - lzma_header
    )
    error = _read_eval(tmp_path / "log.eval", bytes(data))
    assert isinstance(error, AgentLensError) and "header.json" in str(error)
