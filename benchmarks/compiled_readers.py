"""What compiling the step-dense readers with mypyc would buy, for the issue-2 decision.

Run by hand:  python benchmarks/compiled_readers.py [--format mini-swe-agent] [--repeat 9]

Copies `src/` to a temporary folder, compiles the reader of `--format` and the modules its time
goes to (the shell-command classifier, the shared helpers) with mypyc (`mypy` ships it; a C
compiler is needed, ~1.5 min on 2 cores), then runs `ingest_floor.py` once on the pure-Python
source and once on the compiled copy, in the same run. Nothing here is installed or shipped:
AgentLens stays pure Python unless this is chosen.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = [
    "_categories.py",
    "_shell_tokens.py",
    "_openhands_common.py",
    "_fenced_commands.py",
]
READERS = {
    "mini-swe-agent": ["mini_swe_agent.py"],
    "openhands-events": ["openhands_events.py", "_openhands_legacy.py"],
    "swe-agent": ["swe_agent.py", "_swe_agent_runs.py"],
}
SETUP = """\
from setuptools import setup
from mypyc.build import mypycify
setup(name="compiled", ext_modules=mypycify({modules!r}, opt_level="3"), package_dir={{"": "src"}})
"""


def compiled_copy(folder: Path, reader: str) -> Path:
    shutil.copytree(ROOT / "src", folder / "src")
    modules = [f"src/agentlens/formats/{name}" for name in [*SHARED, *READERS[reader]]]
    (folder / "setup.py").write_text(SETUP.format(modules=modules))
    subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"],
        cwd=folder,
        env=os.environ | {"MYPYPATH": "src"},
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return folder / "src"


def floor(source: Path, reader: str, repeat: int) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "ingest_floor.py"), "--format", reader,
         "--repeat", str(repeat)],
        env=os.environ | {"PYTHONPATH": f"{source}{os.pathsep}{ROOT / 'benchmarks'}"},
        check=True,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", choices=sorted(READERS), default="mini-swe-agent")
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        print(f"compiling the {args.format} reader with mypyc ...", flush=True)
        source = compiled_copy(Path(temporary), args.format)
        print("\n== pure Python (as shipped) ==", flush=True)
        floor(ROOT / "src", args.format, args.repeat)
        print("\n== compiled with mypyc ==", flush=True)
        floor(source, args.format, args.repeat)


if __name__ == "__main__":
    main()
