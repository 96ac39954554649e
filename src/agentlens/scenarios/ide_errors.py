"""IDE errors (spec §4.2, §5.2): what an IDE would mark red in the files the agent changed, shown
to the simulated user after every agent turn and to the judge for the end state.

The released runner asks IntelliJ for up to five errors per file, chosen at random with seed 42.
There is no IDE here, so ruff stands in for Python files, restricted to its error-class rules
(`E9` syntax and I/O errors, `F63` invalid comparisons, `F7` misplaced statements, `F82`
undefined names: what CI gates on, not style), with the project's own ruff configuration ignored
(`--isolated`) so that a project's style selection does not turn into "errors". Java,
JavaScript, TypeScript, Go and Rust files get their syntax errors from tree-sitter when the `ide`
extra is installed (`ide_syntax.py`). Modes (scenario key `ide_errors`): `auto` (what is
installed), `ruff` (ruff required), `none`."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from agentlens.errors import ConfigError
from agentlens.redaction import masked_tail
from agentlens.scenarios import ide_syntax
from agentlens.scenarios.scenario import IDE_ERROR_MODES as MODES
from agentlens.verification.inside import read_inside
from agentlens.verification.tree_copy import remove_tree

PER_FILE = 5
SEED = 42
RUFF_RULES = "E9,F63,F7,F82"
TIMEOUT_S = 60.0
MAX_FILES = 500
"""Changed Python files analysed per turn; a turn that touched more is analysed on the first."""


@dataclass(frozen=True, order=True)
class IdeError:
    file: str
    line: int
    column: int
    code: str
    message: str

    def render(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.code} {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "column": self.column,
            "code": self.code,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, saved: dict[str, Any], file: str = "") -> IdeError:
        return cls(
            file=file,
            line=_int(saved.get("line")),
            column=_int(saved.get("column")),
            code=str(saved.get("code") or "error"),
            message=str(saved.get("message") or ""),
        )


@dataclass
class IdeReport:
    """Errors per changed file (at most `PER_FILE` each, in file order), and `note` when there
    is nothing to show for a reason other than a clean result (no analyser, a timeout)."""

    errors: dict[str, list[IdeError]] = field(default_factory=dict)
    files: int = 0
    note: str | None = None

    def render(self) -> str:
        lines = [e.render() for found in self.errors.values() for e in found]
        if self.note:  # after the errors other analysers found
            return "\n".join([*lines, f"(no IDE errors available: {self.note})"])
        if not lines:
            return "(no errors)" if self.files else "(no analysed files changed)"
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        errors = {name: [e.to_dict() for e in found] for name, found in self.errors.items()}
        return {"files": self.files, "errors": errors, "note": self.note}

    @classmethod
    def from_dict(cls, saved: dict[str, Any]) -> IdeReport:
        """Read back from a run's metadata (a hand-edited or damaged entry is left out)."""
        errors = _as_dict(saved.get("errors"))
        note = saved.get("note")
        return cls(
            errors={
                str(name): [IdeError.from_dict(e, str(name)) for e in found if isinstance(e, dict)]
                for name, found in errors.items()
                if isinstance(found, list)
            },
            files=_int(saved.get("files")),
            note=None if note is None else str(note),
        )


def check_mode(mode: str, where: str) -> str:
    """The mode, once known to be usable: `ruff` asked for and not installed is a config error."""
    if mode not in MODES:
        raise ConfigError(f"{where}: ide_errors must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "ruff" and find_ruff() is None:
        raise ConfigError(f"{where}: ide_errors 'ruff' needs ruff: pip install ruff")
    return mode


def find_ruff() -> str | None:
    """On PATH, else beside this Python (a virtualenv run without activating it)."""
    beside = Path(sys.executable).parent / "ruff"
    return shutil.which("ruff") or (str(beside) if beside.is_file() else None)


def ide_errors(repo: Path, changed: list[str], mode: str) -> IdeReport | None:
    """The IDE errors of `changed` (paths relative to `repo`); None when the mode is `none`."""
    if mode == "none":
        return None
    copy = Path(tempfile.mkdtemp(prefix="agentlens-ide-"))
    try:
        python = _copy_inside(repo, [n for n in changed if n.endswith(".py")], copy)
        others = _copy_inside(repo, [n for n in changed if ide_syntax.handles(n)], copy)
        return _report(copy, python, others)
    finally:
        remove_tree(copy)  # `shutil.rmtree` nests a call per folder


def _report(copy: Path, python: list[str], others: list[str]) -> IdeReport:
    ruff = find_ruff()
    report = _ruff(ruff, copy, python) if ruff and python else IdeReport()
    if ruff is None and (python or not others):  # why Python files show no errors
        report.note = "ruff is not installed (pip install ruff)"
    if others:
        syntax = _syntax(copy, others)
        report.errors.update(syntax.errors)
        report.files += syntax.files
    return report


def _copy_inside(repo: Path, changed: list[str], copy: Path) -> list[str]:
    """The changed files that are the repository's own, copied into the private folder `copy`
    that the analysers read. Each is read once, through `read_inside`: a link the agent made
    could point anywhere, and a server of its session could swap a file for one at any time."""
    copied: list[str] = []
    for name in changed:
        if len(copied) == MAX_FILES:
            break
        try:
            source = read_inside(repo, name, ide_syntax.MAX_BYTES)
            _make_folders(copy, PurePosixPath(name).parent)
            (copy / name).write_bytes(source)
        except OSError:
            continue  # gone, a link, too large to be an agent's typing, or past PATH_MAX
        copied.append(name)
    return copied


def _make_folders(root: Path, folder: PurePosixPath) -> None:
    """`folder` below `root`, one level at a time: `mkdir(parents=True)` nests a call per
    folder, and a file the agent wrote 1,500 folders deep ended the run in a RecursionError."""
    made = root
    for part in folder.parts:
        made /= part
        made.mkdir(exist_ok=True)


def _syntax(repo: Path, files: list[str]) -> IdeReport:
    errors = {}
    for name in files:
        try:
            found = ide_syntax.syntax_errors(repo / name)
        except OSError:
            continue  # gone, or unreadable, since the diff was taken
        if found is None:
            continue  # too large to be an agent's typing
        errors[name] = pick([IdeError(name, f.line, f.column, "syntax", f.message) for f in found])
    return IdeReport(errors=errors, files=len(errors))


def _ruff(ruff: str, repo: Path, files: list[str]) -> IdeReport:
    command = [ruff, "check", "--isolated", "--no-cache", "--select", RUFF_RULES]
    command += ["--output-format", "json", "--exit-zero", "--", *files]
    try:
        run = subprocess.run(command, cwd=repo, capture_output=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return IdeReport(files=len(files), note=f"ruff timed out after {TIMEOUT_S:g}s")
    except OSError as exc:
        return IdeReport(files=len(files), note=f"ruff could not start: {exc}")
    try:
        findings = orjson.loads(run.stdout)
    except orjson.JSONDecodeError:
        tail = masked_tail(run.stderr.decode(errors="replace").strip(), 300)
        return IdeReport(files=len(files), note=f"ruff exited {run.returncode}: {tail}")
    found = _by_file(repo, findings if isinstance(findings, list) else [])
    errors = {name: pick(found.get(name, [])) for name in files}
    return IdeReport(errors=errors, files=len(files))


def _by_file(repo: Path, findings: list[Any]) -> dict[str, list[IdeError]]:
    root = repo.resolve()
    found: dict[str, list[IdeError]] = {}
    for item in findings:
        if not isinstance(item, dict):
            continue
        name = _relative(root, str(item.get("filename") or ""))
        where = _as_dict(item.get("location"))
        error = IdeError(
            file=name,
            line=_int(where.get("row")),
            column=_int(where.get("column")),
            code=str(item.get("code") or "error"),
            message=str(item.get("message") or ""),
        )
        found.setdefault(name, []).append(error)
    return found


def pick(errors: list[IdeError]) -> list[IdeError]:
    """At most `PER_FILE` of a file's errors, drawn with seed `SEED` (a fresh generator per
    file, so one file's draw does not depend on the others), shown in file order."""
    if len(errors) <= PER_FILE:
        return sorted(errors)
    return sorted(random.Random(SEED).sample(sorted(errors), PER_FILE))


def _relative(root: Path, filename: str) -> str:
    path = Path(filename)
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return filename


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
