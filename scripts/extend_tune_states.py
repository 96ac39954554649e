#!/usr/bin/env python3
"""Draw more `tune` states for the hand-labelled intent-stage set, leaving the frozen part alone.

    PYTHONPATH=src python scripts/extend_tune_states.py [--seed 22] [--out PATH]

Round 2 of the set (round 1 is `draw_label_states.py`): ~260 more states, all in split `tune`,
weighted toward the formats where the tune part is thin and the labeler struggles. They come only
from trajectory files that hold no frozen state: the files already in the tune part and the files
of the shared data never drawn. States already in the table or in the dev guideline tables are not
drawn again, nor steps whose call is only redaction placeholders; within a format the runs are
interleaved by folder and each run's picks rotate over the thirds of its tool steps, as in round 1.

The round-1 rows are kept byte for byte; the new rows follow them, numbered on from the last id in
a seeded order, and rows of later rounds stay after them untouched. Re-running replaces this
script's earlier rows: same seed, same data -> same CSV.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _labelset import State, redraw_round
from draw_label_states import (
    SOURCES,
    Run,
    Source,
    already_labelled,
    draw,
    numbered,
    quotas,
    read_runs,
)

SEED = 22
SCRIPT = "scripts/extend_tune_states.py"
# New states per format, and the most new states from one run. The thin formats have only a few
# runs outside the frozen files, so their caps are high enough to take most of what is there.
EXTRA = {
    "claude-code": (60, 30),
    "openhands": (50, 30),
    "mini-swe-agent": (50, 30),
    "swe-agent-java": (40, 12),
    "codex": (20, 20),
    "agentlens-bench": (40, 4),
}


def extra_sources() -> tuple[Source, ...]:
    return tuple(replace(s, quota=EXTRA[s.format][0], cap=EXTRA[s.format][1]) for s in SOURCES)


def extra_states(kept: list[State], seed: int) -> list[State]:
    """The new tune states, drawn around everything in `kept` and away from its frozen files."""
    frozen_files = frozenset(s.path for s in kept if s.split == "frozen")
    excluded = already_labelled() | {(s.path, s.step_index) for s in kept}
    sources = extra_sources()
    runs = {s.format: read_runs(s, excluded, frozen_files) for s in sources}
    wanted = quotas(runs, sources)
    rows: list[tuple[str, str, str, int, int]] = []
    for source in sources:
        drawn: list[tuple[Run, int]] = draw(
            source, runs[source.format], wanted[source.format], seed
        )
        rows += [("tune", source.format, r.path, r.record, step) for r, step in drawn]
    first = max(int(s.state_id[1:]) for s in kept) + 1
    return numbered(rows, seed, f"{SCRIPT} --seed {seed}", first)


def summary(new: list[State], kept: list[State]) -> str:
    tune_files = {s.path for s in kept if s.split == "tune"}
    lines = [f"{'format':16} {'new':>4} {'runs':>5} {'new files':>9}"]
    for source in SOURCES:
        mine = [s for s in new if s.format == source.format]
        runs = {(s.path, s.record) for s in mine}
        fresh = {s.path for s in mine} - tune_files
        lines.append(f"{source.format:16} {len(mine):4} {len(runs):5} {len(fresh):9}")
    per_run = Counter((s.path, s.record) for s in new)
    lines.append(
        f"{'total':16} {len(new):4} {len(per_run):5}   most from one run: {max(per_run.values())}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return redraw_round(2, __doc__, SEED, argv, extra_states, summary)


if __name__ == "__main__":
    sys.exit(main())
