"""Where the CPU of one `agentlens cohort` run goes, part by part, in the CLI's own process.

    python benchmarks/cohort_cpu.py TRAJECTORIES [cohort options...]

Runs `agentlens cohort TRAJECTORIES --protocol agentlens-bench --profile sdk-compat --no-tables
--out <tmp>` (more options after the folder are passed on) in this process, the functions of
each part wrapped to add up the CPU seconds spent inside them (`time.process_time`; a part
called from inside another is counted in both, so the indented lines are the outer one's
share). Unlike `sdk_parity.py --phases`, which redoes each part on all runs held at once, this
is the real command's path: the pooled read spilling each run, each task's runs read back and
scored. What the wrappers cost is in the total (~1 µs a call, ~0.1 s in all).
"""

from __future__ import annotations

import importlib
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

START = time.process_time()
PARTS = [  # (label, module, function): the label's indent is its place in the call tree
    ("read: one file, spilled", "agentlens.formats.pooled_read", "read_file"),
    ("  reader (parse, steps)", "agentlens.formats.agentlens_bench", "AgentLensBenchReader.read"),
    ("  number check", "agentlens.formats.load", "has_long_digits"),
    ("  redaction: encode", "agentlens.redaction", "encoded"),
    ("  redaction: scan + check", "agentlens.redaction", "_changed_strings"),
    ("    strings checked", "agentlens.redaction", "_redact_cached"),
    ("  outcome sidecars", "agentlens.formats.pooled_read", "sidecar_labels"),
    ("score: one task", "agentlens.process.cohort_runs", "score_spilled"),
    ("  spill read + decode", "agentlens.process.cohort_runs", "hydrate"),
    ("  labels", "agentlens.process.run_units", "run_labels"),
    ("  reference (PTA)", "agentlens.process.run_units", "_Merges._merge"),
    ("    consolidation", "agentlens.process.pta", "_consolidate"),
    ("  donor baseline (calibrated)", "agentlens.process.donor_baseline", "donor_baseline"),
    ("  score a run", "agentlens.process.score", "score_trajectory"),
    ("    states", "agentlens.process.score", "run_states"),
    ("    paths + plan", "agentlens.process.match", "PathPlan.of"),
    ("    matching", "agentlens.process.score", "match_candidate"),
    ("    signals, waste, report", "agentlens.process.score", "_assemble"),
    ("  row", "agentlens.process.cohort_rows", "result_row"),
]
spent: dict[str, float] = dict.fromkeys([label for label, *_ in PARTS], 0.0)


def timed(label: str, function: Callable[..., Any]) -> Callable[..., Any]:
    depth = [0]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if depth[0]:  # a recursive or re-entrant call is inside the outer one's time
            return function(*args, **kwargs)
        depth[0] += 1
        begun = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] += time.process_time() - begun
            depth[0] -= 1

    return wrapper


def generator_timed(label: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        begun = time.process_time()
        found = list(function(*args, **kwargs))
        spent[label] += time.process_time() - begun
        return iter(found)

    return wrapper


def wrap_parts() -> None:
    for label, module_name, name in PARTS:
        owner: Any = importlib.import_module(module_name)
        *outer, attribute = name.split(".")
        for part in outer:
            owner = getattr(owner, part)
        function = getattr(owner, attribute)
        wrap = generator_timed if attribute == "read" else timed
        setattr(owner, attribute, wrap(label, function))


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    from agentlens.cli import main as cli

    imported = time.process_time() - START
    wrap_parts()
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["cohort", sys.argv[1], "--protocol", "agentlens-bench", "--profile", "sdk-compat",
                "--no-tables", "--out", str(Path(tmp) / "rows.jsonl"), *sys.argv[2:]]  # fmt: skip
        code = cli(argv)
    total = time.process_time() - START
    print(f"{'interpreter + CLI imports':32} {imported:6.2f} s CPU", file=sys.stderr)
    for label, seconds in spent.items():
        print(f"{label:32} {seconds:6.2f} s CPU", file=sys.stderr)
    print(f"{'whole process':32} {total:6.2f} s CPU (exit {code})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
