"""Syntax errors from tree-sitter for the languages ruff does not read: each broken snippet is
caught at its line, real valid files on this machine (the project's Java fixtures, Playwright's
JavaScript and TypeScript, Go's standard library) give none, and `ide_errors` reports them
beside ruff's findings for Python."""

from __future__ import annotations

import os
from pathlib import Path

import playwright
import pytest

from agentlens.scenarios.ide_errors import ide_errors
from agentlens.scenarios.ide_syntax import GRAMMARS, MAX_BYTES, handles, syntax_errors
from tests.secret_at_cut import KEY

pytestmark = pytest.mark.skipif(  # on CI a missing extra fails instead
    not handles("A.java") and not os.environ.get("CI"), reason="needs agentlens[ide]"
)
ROOT = Path(__file__).resolve().parents[2]
PLAYWRIGHT = Path(playwright.__file__).parent / "driver" / "package"
BROKEN = {  # (file, source, the line of the first error)
    "A.java": ("class A {\n  void f() {\n    int x = 1\n    return;\n  }\n}\n", 3),
    "a.js": ("function f() {\n  return [1, 2;\n}\n", 2),
    "a.ts": ("const x: number = ;\n", 1),
    "a.tsx": ("export const A = () => <div>;\n", 1),
    "a.go": ("package main\n\nfunc main() {\n\tx := \n}\n", 4),
    "a.rs": ("fn main() {\n    let x = ;\n}\n", 2),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_file_shows_its_error_at_its_line(tmp_path: Path, name: str) -> None:
    source, line = BROKEN[name]
    (tmp_path / name).write_text(source)
    found = syntax_errors(tmp_path / name)
    assert found, f"no error found in {name}"
    assert found[0].line == line and found[0].message.startswith(("syntax error", "missing `"))


def real_files(suffix: str) -> list[Path]:
    places = {
        ".java": [ROOT / "tests", Path("/usr/share/doc")],
        ".js": [PLAYWRIGHT / "lib"],
        ".ts": [PLAYWRIGHT / "types"],
        ".go": [*Path("/usr/share").glob("go-*/src/strings"), Path("/usr/lib/go/src/strings")],
    }
    found = [
        p for place in places.get(suffix, []) if place.is_dir() for p in place.rglob(f"*{suffix}")
    ]
    return sorted(p for p in found if p.stat().st_size < MAX_BYTES)[:40]


@pytest.mark.parametrize("suffix", [".java", ".js", ".ts", ".go"])
def test_real_valid_files_show_no_errors(suffix: str) -> None:
    files = real_files(suffix)
    if not files:
        pytest.skip(f"no {suffix} sources on this machine")
    assert len(files) >= 3 or suffix == ".java"
    wrong = {str(f): syntax_errors(f) for f in files if syntax_errors(f)}
    assert wrong == {}


def test_they_sit_beside_ruffs_findings_five_a_file_at_most(tmp_path: Path) -> None:
    methods = "\n".join(f"  void m{i}() {{ int x = {i} }}" for i in range(9))
    (tmp_path / "Many.java").write_text(f"class Many {{\n{methods}\n}}\n")
    (tmp_path / "Clean.java").write_text("class Clean { int f() { return 1; } }\n")
    (tmp_path / "b.py").write_text("x = y\n")
    (tmp_path / "notes.md").write_text("not code {\n")
    report = ide_errors(tmp_path, ["Many.java", "Clean.java", "b.py", "notes.md"], "auto")
    assert report is not None and report.files == 3
    assert len(report.errors["Many.java"]) == 5 and report.errors["Clean.java"] == []
    assert [e.line for e in report.errors["Many.java"]] == sorted(
        e.line for e in report.errors["Many.java"]
    )
    assert "b.py:1:5: F821 Undefined name `y`" in report.render().splitlines()
    assert "Many.java:10:24: syntax missing `;`" in report.render().splitlines()
    again = ide_errors(tmp_path, ["Many.java"], "auto")
    assert again is not None and again.errors["Many.java"] == report.errors["Many.java"]  # seed 42


def test_a_file_too_large_to_be_typed_is_not_parsed(tmp_path: Path) -> None:
    big = tmp_path / "Big.java"
    big.write_bytes(b"class Big { int x = }\n" + b" " * MAX_BYTES)
    assert syntax_errors(big) is None
    report = ide_errors(tmp_path, ["Big.java"], "auto")
    assert report is not None and report.files == 0 and report.errors == {}


def test_a_huge_file_an_agent_left_is_not_read_into_memory(tmp_path: Path) -> None:
    """An agent can leave a file as large as its sandbox allows (2 GB by default): it was read
    whole before its size was looked at. Now at most `MAX_BYTES` and one more are read."""
    import subprocess
    import sys

    huge = tmp_path / "Huge.java"
    with huge.open("wb") as file:
        file.truncate(1 << 30)  # sparse: no disk used
    probe = (
        "import resource, sys; from pathlib import Path\n"
        "from agentlens.scenarios.ide_syntax import syntax_errors\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "assert syntax_errors(Path(sys.argv[1])) is None\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", probe, str(huge)], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < 100_000  # KiB: the peak grew by less than 100 MB, not 1 GB


def test_every_grammar_named_is_installed_with_the_extra() -> None:
    assert [s for s in GRAMMARS if not handles(f"x{s}")] == []


def test_a_secret_the_snippet_cut_falls_in_is_masked(tmp_path: Path) -> None:
    """The error's snippet is cut at `SNIPPET` characters for the simulator's view and the saved
    IDE report: a key there went out as `sk-proj-Xy9Qw8Er7`, too short for any detector."""
    (tmp_path / "a.ts").write_text(f'let t = <"rotated, was {KEY}"\n')
    [found] = syntax_errors(tmp_path / "a.ts")
    assert found.message == 'syntax error at `let t = <"rotated, was [REDACTED:openai-key]…`'
