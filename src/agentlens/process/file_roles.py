"""Which kind of file a path names, for the `paper` labeler: the agent's notes, a check file (a
test, or a scratch or reproduction script) or a project source file; and the path forms it
compares (`project_path`), independent of the workspace root each format writes."""

from __future__ import annotations

import re
from typing import Literal

from agentlens.process.step_paths import normalize_path

Role = Literal["check", "notes", "source"]
NOTES = re.compile(
    r"(?:summary|notes|report|documentation|explanation|analysis|solution)[\w-]*\.(?:md|txt|rst)$"
    r"|^(?:fix|changes?|implementation)[\w-]*\.(?:md|txt)$",
    re.IGNORECASE,
)
# The agent's own plan or todo list (Claude Code's plan mode writes `plan.md`, `.claude/plans/x.md`):
# labeling-guideline.md's "think/plan steps, todo lists" (O) wherever it is, except in a docs folder.
PLAN_FILE = re.compile(r"^(?:[\w-]*[-_])?(?:plan|todo)(?:[-_][\w-]*)?\.md$", re.IGNORECASE)
DOC_DIRS = {"doc", "docs", "documentation"}
TEST_DIRS = {"tests", "spec", "__tests__", "testcases"}
# `tmp_x/`, `temp/`, `repro_bug/`; not `templates/` (a word that only starts like `temp`)
SCRATCH_DIR = re.compile(r"^(?:test_|repro|scratch|debug|(?:tmp|temp)(?:$|[\W_\d]))", re.IGNORECASE)
PATCH = "<patch>"
DOT_STEP = re.compile(r"(?<![^/])\./")  # a `./` path step (`tests/./x.py`)
ROOT_NAMES = {"workspace", "workspaces", "testbed", "repo", "app", "agent/workspace/local"}
TASK_FILE = re.compile(r"[\w-]+\.(?:py|pyi|js|jsx|ts|tsx|java|go|rs|rb|c|h|cpp|cs|php|sh)\b")
CHECK_NAME = re.compile(
    r"^(?:tests?|repro|reproduc|debug|scratch|temp|tmp|check|verify|validat|demo|final|"
    r"comprehensive|edge_?case|try|sandbox|minimal|issue|conftest)"
    r"|_tests?$|^tests$",
    re.IGNORECASE,
)
# Test files by each language's convention: `NavUser.test.tsx`, `app.spec.ts`, `x_spec.rb`,
# `FooTest.java`, `FooTests.cs`, `FooIT.java` (the stem alone is read by CHECK_NAME).
TEST_CONVENTION = re.compile(r"\.(?:test|spec)\.\w+$|_spec\.\w+$|[a-z0-9](?:Tests?|IT)\.\w+$")
# System temporary folders (`/tmp`, macOS `/private/tmp` and `/var/folders/..`): where a file was
# written, not a name the agent chose for it.
SYSTEM_TMP = re.compile(r"^/?(?:private/)?(?:var/)?tmp/|^/?(?:private/)?var/folders/")
# Project modules share some scratch-script prefixes (`django/contrib/auth/validators.py`,
# `django/views/debug.py`): such a bare word inside a folder names source, not a scratch script.
MODULE_WORD = re.compile(
    r"checks?|checker|debug|validat[a-z]*|verif[a-z]*|demo|final|minimal|issues?|sandbox|te?mp",
    re.IGNORECASE,
)
PROJECT_FILES = re.compile(
    r"^(?:readme|changelog|changes|license|manifest|makefile|setup\.|pyproject|tox\.ini|"
    r"package\.json|cargo\.toml|pom\.xml|build\.gradle|go\.mod)",
    re.IGNORECASE,
)


def file_role(path: str, *, created: bool = False) -> Role:
    """Agent notes, a check file (test or scratch script), or a project source file."""
    raw = path.strip().replace("\\", "/")
    parts = [p for p in normalize_path(raw).split("/") if p]
    if not parts:
        return "source"
    name = parts[-1]
    if NOTES.search(name) and (len(parts) == 1 or in_tmp(raw)):
        return "notes"
    if _is_plan(parts):
        return "notes"
    if raw == PATCH:
        return "source"
    if in_tmp(raw) or named_check(raw):
        return "check"
    # A brand-new file at the repository root is scaffolding for a reproduction, not the fix.
    project_file = PROJECT_FILES.match(name)
    return "check" if created and len(parts) == 1 and not project_file else "source"


def _is_plan(parts: list[str]) -> bool:
    """The agent's plan or todo file, or anything in its own `.claude/` folder."""
    folders = set(parts[:-1])
    return ".claude" in folders or (bool(PLAN_FILE.match(parts[-1])) and not DOC_DIRS & folders)


def named_check(path: str) -> bool:
    """A check file by its name (`reproduce_x.py`, `test_y.py`) or folder (`tests/`), as opposed
    to one taken for a check only by where it was written (`/tmp/`, a new file at the root)."""
    raw = path.strip().replace("\\", "/")
    parts = _folder_steps(raw)
    if not parts:
        return False
    stem = parts[-1].split(".", 1)[0]
    scratch = CHECK_NAME.search(stem) and not (len(parts) > 1 and MODULE_WORD.fullmatch(stem))
    named = raw.rstrip("/").rsplit("/", 1)[-1]  # as written: the conventions are case-sensitive
    return bool(scratch) or bool(TEST_CONVENTION.search(named)) or _in_test_dir(parts[:-1])


def _folder_steps(raw: str) -> list[str]:
    """The path's steps below the workspace root, lowercased. Unlike `normalize_path` (the
    release's), a `tmp/` inside the project (`/testbed/tmp/pom.xml`) stays: it names a scratch
    folder; a system temp root (`/tmp/`, `/private/tmp/`) goes: it names no folder of the run's."""
    text = SYSTEM_TMP.sub("", raw).lstrip("/").lower()
    for root in ("testbed/", "workspaces/", "workspace/"):
        text = text.removeprefix(root)
    return [p for p in text.split("/") if p]


def _in_test_dir(dirs: list[str]) -> bool:
    """`tests/`, `__tests__/`, scratch dirs (`test_issue/`, `tmp_x/`); `test/` only at the top or
    under `src/` (maven), since `django/test/` is library source."""
    for i, part in enumerate(dirs):
        if part in TEST_DIRS or SCRATCH_DIR.match(part):
            return True
        if part == "test" and (i == 0 or dirs[i - 1] == "src"):
            return True
    return False


def project_path(path: str) -> str:
    """A normalised path (`normalize_path`) as the project sees it: `./` steps dropped, and a
    workspace root named alone (`/workspace`, `/testbed`) is the project's root, ""."""
    text = DOT_STEP.sub("", path)
    return "" if text.strip("/") in ROOT_NAMES or text in (".", "./") else text


def names_one_of(path: str, known: set[str]) -> bool:
    """Is `path` one of `known` written from another folder (`/Users/me/repo/tests/x.py` and
    `tests/x.py`)? Matched on two or more trailing path steps, so a bare name never matches."""
    parts = path.split("/")
    for other in known:
        steps = other.split("/")
        common = min(len(parts), len(steps))
        if common >= 2 and parts[-common:] == steps[-common:]:
            return True
    return False


def named_by_folder_only(path: str) -> bool:
    """A check only because of its folder (`tests/missing_colon.py`), not its name or `/tmp/`."""
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    stem = name.split(".", 1)[0]
    by_name = CHECK_NAME.search(stem) or TEST_CONVENTION.search(name)
    return named_check(path) and not by_name and not in_tmp(path)


def task_file_names(task: str | None) -> frozenset[str]:
    """The file names a task's text mentions (`missing_colon.py`), lowercased."""
    return frozenset(m.lower() for m in TASK_FILE.findall(task or ""))


def drop_root(path: str) -> str:
    return path.split("/", 1)[1] if "/" in path else ""


def in_tmp(raw: str) -> bool:
    return bool(SYSTEM_TMP.match(raw))
