#!/usr/bin/env python3
"""Draw a blind test split of trace formats the labeler was never built on (round 4), before any look.

    PYTHONPATH=src python scripts/draw_frozen_round4.py [--seed 24] [--out PATH]

Rounds 1-3 drew from the six formats of `draw_label_states.SOURCES`, the ones the labeler's rules
were written and tuned against. Round 4 draws ~120 states, all in the new split `frozen4`, from the
other folders of `formats/` (table below), so `frozen4` measures how the labeler carries over to
agents and trace formats it has never seen. Two folders are left out: `terminal-bench-leaderboard`
has no structured steps (tmux keystrokes in `commands.txt`, raw terminal output in `agent.log`; no
AgentLens reader makes tool steps of them) and `inspect-ai`'s only log with tool steps is a web-browsing
task (summarise a website), not coding-agent work; its other logs have no tool step.

Quotas are even over the formats; a format with too few steps gives what it has and SWE-agent, the
one format with many runs, takes the rest. As in rounds 1 and 3, runs are interleaved by folder,
each run gives at most `CAP` states with picks rotating over the thirds of its tool steps, steps
whose call is only redaction placeholders, states of the dev guideline tables and files holding a
state of an earlier round are not drawn.

Rows of rounds 1-3 are kept byte for byte; the new rows follow them, numbered on from the last id
in a seeded order. Re-running replaces this script's earlier rows: same seed, same data -> same CSV.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _labelset import State, redraw_round
from draw_frozen_round3 import fresh_states, summary
from draw_label_states import Source

SEED = 24
SCRIPT = "scripts/draw_frozen_round4.py"
SPLIT = "frozen4"
TOTAL = 120
CAP = 6  # most states from one run: the single-session formats give 6 of their 8-13 tool steps
FOLDERS = {
    "swe-agent": "formats/swe-agent",
    "gemini-cli": "formats/gemini-cli",
    "gemini-cli-jsonl": "formats/gemini-cli-jsonl",
    "copilot-cli": "formats/copilot-cli",
    "grok-cli": "formats/grok-cli",
    "atif-harbor-golden": "formats/atif-harbor-golden",
    "openai-messages": "formats/openai-messages",
}


def round4_sources() -> tuple[Source, ...]:
    """Even quotas summing to TOTAL; only SWE-agent (22 runs) absorbs what the others lack."""
    share, extra = divmod(TOTAL, len(FOLDERS))
    return tuple(
        Source(fmt, (folder,), share + (k < extra), CAP, absorbs=fmt == "swe-agent")
        for k, (fmt, folder) in enumerate(FOLDERS.items())
    )


def new_states(kept: list[State], seed: int) -> list[State]:
    """The round-4 states, from files of the unseen formats that hold none of `kept`."""
    return fresh_states(kept, round4_sources(), SPLIT, f"{SCRIPT} --seed {seed}", seed)


def main(argv: list[str] | None = None) -> int:
    return redraw_round(
        4, __doc__, SEED, argv, new_states, lambda new, _: summary(new, round4_sources())
    )


if __name__ == "__main__":
    sys.exit(main())
