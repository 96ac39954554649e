"""A run that waits in a spill file comes back as it was read, values JSON cannot carry included:
a float NaN or Infinity in a tool call's arguments and a lone surrogate in its text (Python's
`json`, which the OTel reader parses arguments with, takes `NaN` and a `\\ud800` escape). Both
spills are checked: `read_paths`' spool (every file but the last) and a cohort's spill files
(`pooled_read`), on both engines, and the scores that come out of the spill are the ones the
serial path, which reads each file directly, gives."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path

import msgspec
import pytest

from agentlens.engine import get_engine
from agentlens.formats import _spill_codec
from agentlens.formats.load import read_path
from agentlens.formats.stream import read_paths
from agentlens.process.cohort_rows import result_row
from agentlens.process.cohort_runs import read_cohort, score_spilled_run, spilled_runs
from agentlens.process.reference import build_reference
from agentlens.process.run_units import RunFailure, ScoredRun, score_run
from agentlens.seams import Engine
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH

CAPTURE = Path(__file__).parent / "otel" / "openinference-openai-session.otlp.json"
TASK = BENCH / "trajectories" / "psf__requests-1724"
PLANTED = {
    "a-nan.otlp.json": ', "depth": NaN, "limit": Infinity, "floor": -Infinity',
    "b-surrogate.otlp.json": ', "note": "half \\ud800 of a pair"',
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real OTel capture twice, a value planted in a tool call's arguments of each, and a
    real run after them (`read_paths` holds the last file in memory: the others are spooled)."""
    found = tmp_path_factory.mktemp("planted")
    for number, (name, extra) in enumerate(PLANTED.items()):
        text = CAPTURE.read_text().replace('"traceId": "', f'"traceId": "{number}')  # own ids
        (found / name).write_text(json.dumps(_planted(json.loads(text), extra)))
    shutil.copy(sorted(TASK.glob("*.json"))[0], found / "z-real.json")
    return found


def _planted(doc: dict[str, object], extra: str) -> dict[str, object]:
    for resource in doc["resourceSpans"]:  # type: ignore[attr-defined]
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for attribute in span["attributes"]:
                    text = attribute["value"].get("stringValue", "")
                    if attribute["key"].endswith("function.arguments") and text.endswith("}"):
                        attribute["value"]["stringValue"] = text[:-1].rstrip() + extra + " }"
    return doc


def _direct(folder: Path) -> list[Trajectory]:
    return [t for path in sorted(folder.iterdir()) for t in read_path(path)]


@pytest.fixture(scope="module", params=["serial", "processes:2"])
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with get_engine(request.param) as chosen:
        yield chosen


def test_the_planted_values_are_read(folder: Path) -> None:
    """The cases below are not vacuous: the reader keeps what was planted."""
    nan, surrogate, _ = _direct(folder)
    (arguments, *_) = [s.arguments for s in nan.tool_steps if "depth" in s.arguments]
    assert math.isnan(arguments["depth"]) and arguments["limit"] == -arguments["floor"] > 1e308
    assert any("\ud800" in str(s.arguments.get("note")) for s in surrogate.tool_steps)


def test_read_paths_gives_each_run_as_read(folder: Path) -> None:
    whole = read_paths([str(folder)])
    assert whole.failures == []
    assert repr(whole.trajectories) == repr(_direct(folder))  # NaN != NaN: equal as written


def test_a_spilled_run_comes_back_as_read(folder: Path, engine: Engine) -> None:
    with read_cohort([str(folder)], engine=engine) as (summary, spill):
        assert summary.failures == []
        back = spill.load(spill.refs)
    assert repr(back) == repr(_direct(folder))


def test_scores_from_the_spill_are_the_serial_ones(folder: Path, engine: Engine) -> None:
    passing = [t for path in sorted(TASK.glob("*-pass-*.json"))[:3] for t in read_path(path)]
    reference = build_reference(passing, "paper")
    serial = [_row(score_run(t, reference, "paper")) for t in _direct(folder)]
    with read_cohort([str(folder)], engine=engine) as (_, spill):
        runs = spilled_runs(spill, local=True)
        scoring = partial(score_spilled_run, reference=reference, profile="paper")
        spilled = [_row(outcome.value) for outcome in engine.map(scoring, runs)]
    assert spilled == serial and len(serial) == 3


def _row(scored: ScoredRun | None) -> object:
    assert scored is not None and not isinstance(scored, RunFailure), scored
    return repr(result_row(scored))


def _odd(run: Trajectory, case: str) -> Trajectory:
    """The real run with one value that msgpack alone would change or refuse."""
    step = run.steps[1]
    if case == "utc offset":
        when = datetime(2025, 3, 1, 9, 30, 0, 123456, tzinfo=timezone(timedelta(hours=5.5)))
        step = msgspec.structs.replace(step, timestamp=when)
    elif case == "lone surrogate":
        step = msgspec.structs.replace(step, text="half \ud800 of a pair")
    elif case == "int beyond 64 bits":
        step = msgspec.structs.replace(step, raw={"id": 2**70})
    elif case == "nan":
        step = msgspec.structs.replace(step, cost=float("nan"), arguments={"x": float("-inf")})
    return msgspec.structs.replace(run, steps=[run.steps[0], step, *run.steps[2:]])


@pytest.mark.parametrize("case", ["utc offset", "lone surrogate", "int beyond 64 bits", "nan"])
def test_the_codec_gives_back_what_msgpack_alone_would_not(case: str) -> None:
    (run,) = read_path(sorted(TASK.glob("*.json"))[0])
    assert _spill_codec.encode(run)[:1] == b"m"  # the real run: msgpack
    odd = _odd(run, case)
    back = _spill_codec.decode(_spill_codec.encode(odd))
    assert repr(back) == repr(odd)
    if case != "lone surrogate":  # what JSON can write, it writes alike
        assert msgspec.json.encode(back) == msgspec.json.encode(odd)
