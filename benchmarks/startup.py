"""CPU of starting the CLI (best of 3, the process tree's, as `benchmarks/engines.py` measures it):
`agentlens --help`, `cohort --help`, and a one-task cohort with and without the redaction pass.

    python benchmarks/startup.py
"""

from __future__ import annotations

import sys

from engines import DEV, run_child

TASK = str(DEV / "psf__requests-1724")
CASES: dict[str, list[str] | None] = {
    "python -c pass": None,
    "agentlens --help": ["--help"],
    "agentlens cohort --help": ["cohort", "--help"],
    "cohort, 1 task (32 runs scored), --no-tables": [
        "cohort", TASK, "--protocol", "agentlens-bench", "--no-tables"],
    "the same with --no-redact": [
        "--no-redact", "cohort", TASK, "--protocol", "agentlens-bench", "--no-tables"],
}  # fmt: skip


def main() -> None:
    for name, args in CASES.items():
        argv = [sys.executable, *(["-c", "pass"] if args is None else ["-m", "agentlens", *args])]
        print(f"{name:48} {min(run_child(argv).cpu for _ in range(3)):5.2f} s CPU", flush=True)


if __name__ == "__main__":
    main()
