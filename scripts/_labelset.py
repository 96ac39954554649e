"""Shared by the labelled-set scripts: where the data is, the states table, reading a state's run.

The hand-labelled intent-stage set (issue 21, item 3) names each state by its trajectory file
(relative to the data folder), the record inside that file and the index into `Trajectory.steps`;
every trajectory is read through AgentLens's own readers, so a state id always means the step the
labelers see.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from agentlens.formats.load import read_path
from agentlens.trajectory import Trajectory

REPO = Path(__file__).resolve().parents[1]
STATES_DIR = REPO / "tests" / "process" / "labelled_states"
STATES_CSV = STATES_DIR / "states.csv"
ANNOTATIONS_CSV = STATES_DIR / "annotations.csv"
WORK = Path(os.environ.get("AGENTLENS_LABELSET", "/work/labelset"))
STATE_FIELDS = ("state_id", "split", "format", "path", "record", "step_index", "drawn_by")
STAGES = ("E", "I", "V", "O")
# The scripts that drew each labelling round; round n's packets, labels and adjudication live in
# WORK/packets<n>, WORK/labels<n> and WORK/adjudication<n>.csv, with no number for round 1.
ROUND_SCRIPTS = (
    "scripts/draw_label_states.py",
    "scripts/extend_tune_states.py",
    "scripts/draw_frozen_round3.py",
    "scripts/draw_frozen_round4.py",
)
# Every split, in report order: round 1's tune / frozen, round 3's fresh frozen part, round 4's
# blind part of the trace formats the labeler was never built on.
SPLITS = ("tune", "frozen", "frozen3", "frozen4")


def data_dir() -> Path:
    """The shared data folder: `AGENTLENS_DATA`, else `../shared/data` beside the repo (as tests)."""
    return Path(os.environ.get("AGENTLENS_DATA", REPO.parent / "shared" / "data"))


def drawing_args(doc: str, seed: int, argv: list[str] | None) -> argparse.Namespace | None:
    """`--seed` and `--out` of a script that draws states; None (after one line on stderr) when
    the shared data folder it draws from is missing."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--out", type=Path, default=STATES_CSV)
    args = parser.parse_args(argv)
    if not data_dir().is_dir():
        print(f"error: shared data not found at {data_dir()}; set AGENTLENS_DATA", file=sys.stderr)
        return None
    return args


def redraw_round(
    number: int,
    doc: str,
    seed: int,
    argv: list[str] | None,
    draw: Callable[[list[State], int], list[State]],
    report: Callable[[list[State], list[State]], str],
) -> int:
    """A later round's script: its states drawn anew from the rows of the rounds before it,
    written between those and the rows of the rounds after it (both kept byte for byte), then
    summarised. Exit 2 when the shared data is missing."""
    args = drawing_args(doc, seed, argv)
    if args is None:
        return 2
    states = read_states()
    kept = rounds_before(states, number)
    new = draw(kept, args.seed)
    write_states(kept + new + rounds_after(states, number), args.out)
    print(report(new, kept))
    span = f"{new[0].state_id}..{new[-1].state_id}"
    print(f"wrote {len(kept)} + {len(new)} states to {args.out} ({span})")
    return 0


@dataclass(frozen=True)
class State:
    state_id: str
    split: str
    format: str
    path: str
    record: int
    step_index: int
    drawn_by: str


def read_states(path: Path = STATES_CSV) -> list[State]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            State(
                state_id=row["state_id"],
                split=row["split"],
                format=row["format"],
                path=row["path"],
                record=int(row["record"]),
                step_index=int(row["step_index"]),
                drawn_by=row["drawn_by"],
            )
            for row in csv.DictReader(handle)
        ]


def write_states(states: list[State], path: Path = STATES_CSV) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(STATE_FIELDS)
        for s in states:
            writer.writerow(
                [s.state_id, s.split, s.format, s.path, s.record, s.step_index, s.drawn_by]
            )


def round_of(state: State) -> int:
    return next(
        (k for k, script in enumerate(ROUND_SCRIPTS, start=1) if state.drawn_by.startswith(script)),
        0,
    )


def rounds_before(states: list[State], number: int) -> list[State]:
    return [s for s in states if round_of(s) < number]


def rounds_after(states: list[State], number: int) -> list[State]:
    return [s for s in states if round_of(s) > number]


def round_suffix(number: int) -> str:
    return "" if number == 1 else str(number)


def labels_dirs() -> list[Path]:
    return [WORK / f"labels{round_suffix(n)}" for n in range(1, len(ROUND_SCRIPTS) + 1)]


def adjudication_files() -> list[Path]:
    return [WORK / f"adjudication{round_suffix(n)}.csv" for n in range(1, len(ROUND_SCRIPTS) + 1)]


@lru_cache(maxsize=64)
def read_file(relative: str) -> tuple[Trajectory, ...]:
    return tuple(read_path(data_dir() / relative))


def trajectory_of(state: State) -> Trajectory:
    return read_file(state.path)[state.record]
