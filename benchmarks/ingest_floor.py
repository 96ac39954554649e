"""Where a step-dense reader's time goes, against a bare `orjson.loads`.

Run by hand:  python benchmarks/ingest_floor.py [--data ../shared/data] [--format mini-swe-agent]

`ingest.py` reports each reader's ratio to the bare parse; this script splits it. It runs what this
package runs (see `benchmarks/ingest.py` on compiled and pure-Python builds). For one
format it times, in turns and best of `--repeat`:
  parse      orjson.loads of each file (the baseline, 1.00);
  steps      the parse plus one bare `Step` per message (role, text and the message as `raw`;
             for SWE-agent, per `trajectory` entry with its action and observation), the least
             any reader that builds the model must do;
  classify   `analyse_command` of every step's command, caches cleared (the format's own reader
             classifies each command exactly so: mini-swe-agent's actions are all shell lines);
  reader     the real reader.
`steps + classify` is a lower bound for a reader that gives every step its category; the reader
also reads usage, cost, model and time per reply and finds the command block in each reply.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from agentlens.compiled import status
from agentlens.formats.registry import detect
from agentlens.shell.categories import analyse_command
from agentlens.trajectory import Step
from ingest import ROOT, _head, best_of, clear_caches, group_by_format


def bare_steps(data: bytes) -> list[Step]:
    doc: Any = orjson.loads(data)
    if isinstance(doc, dict) and isinstance(doc.get("trajectory"), list):  # SWE-agent `.traj`
        return [
            Step(index=i, kind="tool", text=str(e.get("thought") or ""),
                 command=str(e.get("action") or ""), observation=str(e.get("observation") or ""),
                 raw=e)
            for i, e in enumerate(doc["trajectory"])
        ]  # fmt: skip
    messages = doc if isinstance(doc, list) else doc.get("messages") or []
    return [
        Step(index=i, kind="agent", text=str(m.get("content") or ""), raw=m)
        for i, m in enumerate(messages)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--format", default="mini-swe-agent")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    files = group_by_format(args.data)[args.format]
    reader = detect(*_head(files[0]))(lenient=True)  # type: ignore[call-arg]
    read = [t for path, data in files for t in reader.read(path, data)]  # type: ignore[attr-defined]
    commands = [s.command for t in read for s in t.steps if s.command]
    work = {
        "parse": lambda: [orjson.loads(d) for _, d in files],
        "steps": lambda: [bare_steps(d) for _, d in files],
        "classify": lambda: [analyse_command(c) for c in commands],
        "reader": lambda: [list(reader.read(p, d)) for p, d in files],  # type: ignore[attr-defined]
    }
    best = dict.fromkeys(work, float("inf"))
    for _ in range(args.repeat):  # in turns, so a burst of load slows all four alike
        for name, run in work.items():
            best[name] = min(best[name], best_of(1, run, setup=clear_caches))
    steps = sum(len(t.steps) for t in read)
    table = Table("part", "ms", "x parse")
    for name, seconds in best.items():
        table.add_row(name, f"{seconds * 1e3:.3f}", f"{seconds / best['parse']:.2f}")
    bound = best["steps"] + best["classify"]
    table.add_row("steps + classify", f"{bound * 1e3:.3f}", f"{bound / best['parse']:.2f}")
    console = Console(width=100)
    console.print(f"build: {status()}")
    console.print(f"{args.format}: {len(files)} files, {steps} steps, {len(commands)} commands")
    console.print(table)
    console.print(f"reader ÷ (steps + classify) = {best['reader'] / bound:.2f}")


if __name__ == "__main__":
    main()
