"""A tiny real git repository for the review demo and tests: a Python package with a pytest suite
and one known bug, plus the scripted edit that fixes it (what an agent would have done)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FILES: dict[str, str] = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "calc/__init__.py": "",
    "calc/ops.py": (
        '"""Arithmetic helpers."""\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n\n\n'
        "def sub(a: int, b: int) -> int:\n    return a + b  # bug: should subtract\n"
    ),
    "tests/test_ops.py": (
        "from calc.ops import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_sub():\n    assert sub(3, 2) == 1\n"
    ),
    "README.md": "# calc\n\nTiny arithmetic package.\n",
}
FIX_OLD = "    return a + b  # bug: should subtract\n"
FIX_NEW = "    return a - b\n"
NEW_TEST = "\n\ndef test_sub_negative():\n    assert sub(2, 3) == -1\n"


def git(repo: Path, *args: str) -> str:
    cmd = ["git", "-C", str(repo), "-c", "user.name=AgentLens", "-c", "user.email=demo@agentlens"]
    return subprocess.run([*cmd, *args], check=True, capture_output=True, text=True).stdout


def create_repo(root: Path) -> Path:
    """Write the package, commit it (the base revision) and return the repository path."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "calc: initial")
    return root


def apply_fix(repo: Path) -> None:
    """The scripted agent edit: fix `sub` and add a regression test (left uncommitted)."""
    ops = repo / "calc" / "ops.py"
    ops.write_text(ops.read_text().replace(FIX_OLD, FIX_NEW))
    with (repo / "tests" / "test_ops.py").open("a") as handle:
        handle.write(NEW_TEST)


# The demo's own interpreter first on PATH: its pytest and ruff, where installed, run the checks
# (a check whose tool is installed nowhere is skipped, naming what to install).
OWN_TOOLS = {"PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])}

DEMO_SCENARIO: dict[str, object] = {
    "name": "fix_sub",
    "verifiers": [
        {"type": "YesChangesVerifier", "target_files": ["calc/ops.py"]},
        {
            "type": "NoChangesVerifier",
            "allowed_globs": ["calc/*.py", "tests/*.py"],
            "forbidden_globs": ["pyproject.toml"],
        },
        {
            "type": "PythonFileRegExpCountVerifier",
            "search_in": "tests",
            "reg_exp_pattern": r"^def test_",
            "num_expected": 3,
        },
        {
            "type": "RunTestsVerifier",
            "runner": "pytest",
            "command": ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
            # Third-party pytest plugins in the caller's environment cost seconds per run.
            "env": {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **OWN_TOOLS},
        },
        {"type": "StaticAnalysisVerifier", "tool": "ruff", "path": "calc", "env": OWN_TOOLS},
    ],
}
