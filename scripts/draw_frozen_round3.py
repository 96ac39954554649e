#!/usr/bin/env python3
"""Draw a fresh frozen part (round 3) of the hand-labelled intent-stage set, before any look at it.

    PYTHONPATH=src python scripts/draw_frozen_round3.py [--seed 23] [--out PATH]

The round-1 frozen part has been studied, so it no longer measures the labeler blind. Round 3
draws ~220 states, all in the new split `frozen3`, ONLY from trajectory files that hold no state
of rounds 1-2 (no path already in the table). The quota is even over the formats of
`draw_label_states.SOURCES`; a format with too few never-drawn files gives what it has and
AgentLens-Bench takes the rest. As in round 1, runs are interleaved by folder, each run gives at
most `cap` states with picks rotating over the thirds of its tool steps, steps whose call is only
redaction placeholders and states of the dev guideline tables are not drawn.

Rows of rounds 1-2 are kept byte for byte; the new rows follow them, numbered on from the last id
in a seeded order, and rows of later rounds stay after them untouched. Re-running replaces this
script's earlier rows: same seed, same data -> same CSV.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _labelset import State, redraw_round
from draw_label_states import SOURCES, Source, already_labelled, draw, numbered, quotas, read_runs

SEED = 23
SCRIPT = "scripts/draw_frozen_round3.py"
SPLIT = "frozen3"
TOTAL = 220
# Most states from one run. AgentLens-Bench has ~130 never-drawn single-run files, so 2 each
# spreads its share over most of them; the thin formats keep round 1's caps.
CAPS = {"agentlens-bench": 2, "swe-agent-java": 5}
THIN_CAP = 8


def round3_sources() -> tuple[Source, ...]:
    """Even quotas summing to TOTAL; only AgentLens-Bench absorbs what the others lack."""
    share, extra = divmod(TOTAL, len(SOURCES))
    return tuple(
        replace(
            s,
            quota=share + (k < extra),
            cap=CAPS.get(s.format, THIN_CAP),
            absorbs=s.format == "agentlens-bench",
        )
        for k, s in enumerate(SOURCES)
    )


def new_states(kept: list[State], seed: int) -> list[State]:
    """The round-3 states, from files that hold none of `kept`."""
    return fresh_states(kept, round3_sources(), SPLIT, f"{SCRIPT} --seed {seed}", seed)


def fresh_states(
    kept: list[State], sources: tuple[Source, ...], split: str, drawn_by: str, seed: int
) -> list[State]:
    """States of `split` drawn from the sources' files that hold none of `kept`, numbered on."""
    used_files = frozenset(s.path for s in kept)
    runs = {s.format: read_runs(s, already_labelled(), used_files) for s in sources}
    wanted = quotas(runs, sources)
    rows: list[tuple[str, str, str, int, int]] = []
    for source in sources:
        drawn = draw(source, runs[source.format], wanted[source.format], seed)
        rows += [(split, source.format, r.path, r.record, step) for r, step in drawn]
    first = max(int(s.state_id[1:]) for s in kept) + 1
    return numbered(rows, seed, drawn_by, first)


def summary(new: list[State], sources: tuple[Source, ...] = SOURCES) -> str:
    lines = [f"{'format':18} {'states':>6} {'runs':>5} {'files':>5}"]
    for source in sources:
        mine = [s for s in new if s.format == source.format]
        runs = {(s.path, s.record) for s in mine}
        files = {s.path for s in mine}
        lines.append(f"{source.format:18} {len(mine):6} {len(runs):5} {len(files):5}")
    per_run = Counter((s.path, s.record) for s in new)
    files = {s.path for s in new}
    lines.append(
        f"{'total':18} {len(new):6} {len(per_run):5} {len(files):5}"
        f"   most from one run: {max(per_run.values())}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return redraw_round(3, __doc__, SEED, argv, new_states, lambda new, _: summary(new))


if __name__ == "__main__":
    sys.exit(main())
