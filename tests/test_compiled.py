"""`agentlens.compiled`: the modules an install compiles with mypyc read exactly as their source.

Where this install compiled them, every shared trajectory and every shell line in the shared data
is read twice, here and in a Python that imports a copy of the package's source files only, and
the canonical JSON of each compared: an install without a C compiler reads everything alike. A
compiled module older than its source fails the suite, so a tree built in place is rebuilt after
an edit (`python setup.py build_ext --inplace`) rather than silently running the old rules.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

import agentlens
from agentlens.cli import cli
from agentlens.compiled import COMPILED, compiled_modules, stale, status
from agentlens.formats import mini_swe_agent as mini
from agentlens.trajectory import Trajectory
from tests.conftest import DATA, FORMATS

READ_ALL = """
import hashlib, json, sys
import msgspec
from agentlens.formats.stream import read_paths
from agentlens.shell.categories import analyse_command
result = read_paths([sys.argv[1]])
lines = sorted({s.command for t in result.trajectories for s in t.steps if s.command})
print(json.dumps({
    "trajectories": {t.source.path + "#" + t.id: hashlib.sha256(msgspec.json.encode(t)).hexdigest()
                     for t in result.trajectories},
    "failures": sorted(str(f.path) for f in result.failures),
    "shell": [repr(analyse_command(line)) for line in lines],
}))
"""


def _read_all(env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", READ_ALL, str(DATA)],
        env=os.environ | env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_no_compiled_module_is_older_than_its_source() -> None:
    assert stale() == [], "rebuild: python setup.py build_ext --inplace"


def test_the_build_environment_can_type_check_the_compiled_modules() -> None:
    """pip builds in an isolated environment holding only the build requirements. Without
    msgspec there, mypyc's check of the modules the compiled ones import fails (`Unexpected
    keyword argument "kw_only"` on every Struct) and a fresh `pip install -e .` in a new venv
    was silently pure Python; a second install, with msgspec in the venv, compiled."""
    pyproject = Path(agentlens.__file__).resolve().parents[2] / "pyproject.toml"
    requires = tomllib.loads(pyproject.read_text())["build-system"]["requires"]
    names = {re.split(r"[<>=!~ \[;]", requirement, maxsplit=1)[0] for requirement in requires}
    assert {"mypy", "msgspec"} <= names


def test_formats_names_the_build() -> None:
    line = CliRunner().invoke(cli, ["formats"]).output.splitlines()[-1]
    assert line == f"build: {status()}"
    built = compiled_modules()
    assert line.startswith("build: compiled: ") == bool(built)
    assert all(COMPILED[name] in line for name in built)


def test_compiled_modules_read_every_shared_file_as_their_source(tmp_path: Path) -> None:
    if not compiled_modules():
        if os.environ.get("CI"):  # CI has a C compiler: the modules must have been compiled
            pytest.fail("nothing was compiled (see setup.py)")
        pytest.skip("nothing compiled in this install: it runs the source")
    package = Path(agentlens.__file__).parent
    shutil.copytree(package, tmp_path / "agentlens", ignore=shutil.ignore_patterns("*.so", "*.c"))
    source = _read_all({"PYTHONPATH": str(tmp_path)})
    here = _read_all({})
    assert len(here["trajectories"]) > 500  # type: ignore[arg-type]
    assert here == source


def test_mini_swe_agent_trajectories_validate() -> None:
    paths = sorted(DATA.glob("mini-swe-agent-swebv/trajs/*/*.traj.json"))
    paths += sorted((FORMATS / "mini-swe-agent-fixtures").glob("*.traj.json"))
    assert paths
    for path in paths:
        for trajectory in mini.MiniSweAgentReader().read(path, path.read_bytes()):
            encoded = msgspec.json.encode(trajectory)
            assert msgspec.json.decode(encoded, type=Trajectory) == trajectory


def test_the_copy_of_the_source_is_the_source(tmp_path: Path) -> None:
    """The pure reading above imports the copy, not this install (a hash of what it imports)."""
    package = Path(agentlens.__file__).parent
    shutil.copytree(package, tmp_path / "agentlens", ignore=shutil.ignore_patterns("*.so", "*.c"))
    code = "import agentlens.shell.categories as m; print(m.__file__)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=os.environ | {"PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == str(tmp_path / "agentlens" / "shell" / "categories.py")
    assert (
        hashlib.sha256(Path(done.stdout.strip()).read_bytes()).digest()
        == hashlib.sha256((package / "shell" / "categories.py").read_bytes()).digest()
    )
