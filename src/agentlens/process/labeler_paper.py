"""`paper` labeler (default): intent stages as a careful human assigns them (labeling-guideline.md).

The context is "has the agent changed the project yet, and which files": before a change, running
or probing anything is Exploration; after one, running code, tests or `git diff`, and re-reading an
edited file, is Verification. Scratch scripts and test files ("check files") are Exploration when
written before the change (reproducing the problem) and Verification after it. Deliberate fixes of
the released labeler's quirks (spec §3.7, §15 #19):

* a redirect of a program's output (`2>&1`, `> log`) is not an edit, so it does not start the
  "after a change" context;
* a keyword inside an argument (`grep pytest setup.cfg`, `cat tox.ini`) is not a test run;
* creating a reproduction script before any fix is Exploration (the release says Implementation),
  and so is editing it later, however it is named, once the run has created it as a check file;
* `mkdir -p d`, `git restore f`, `git clean -fd`, `rm a b` are Orchestration (cleanup/workspace);
* only agent notes (`FIX_SUMMARY.md`, `*_notes.txt`) are Orchestration; `report.py` is source;
* files under `/tmp/` are scratch, not project files (the release's path normalisation hid them);
* position in the run ("near the end") is not evidence of intent and is not used;
* a failed edit (the tool reported an error) is still Implementation but changes nothing;
* running a script the run wrote whose code rewrites a project file (`cat > fix.py <<EOF` …
  `open('pkg/x.py', 'w')`, then `python fix.py`) is Implementation (`labeler_scripts`).

Readings added from the hand-labelled set's tune part (tests/process/labelled_states):

* a file written before the run has looked at anything is the deliverable (I), even at the root
  or in `/tmp/`: with nothing explored there is no problem to reproduce; a check name still wins;
* listing a directory follows the read rule: the edited file's folder after a change is V;
* clarifying questions, messages, tracker records, mailed files, toolchain probes after a change
  and SWE-agent's broken `DISCUSSION` turns are read in `labeler_paper_tools`.

Readings added from the round-2 tune states (docs/labeler.md, "Round-2 rules"):

* an edit that undoes an earlier one is cleanup (O); with every edit undone the run is "before
  the change" again;
* after a change, a file search for tests, a re-read of a file the run's `git diff` showed
  changed (V) and a prose search for how to install a tool (O);
* Python that writes a project file through a `Path` variable is a write.

Readings added from the spent first frozen round (docs/labeler.md, "Round-3 rules"):

* edits the context missed: a file the task names (even in `tests/`), a first write under a
  system temp root (`/private/tmp/`), a rename onto a project name, Python run as the whole
  command, a script whose code rewrites a project file, `apply_patch`;
* after a change, a file beside an edited one is other code (E), a listing of the project root
  is V, the very next look at a file an edit failed on is V, and so is a look the agent's own
  note says verifies;
* bookkeeping (`git push`, tracker status updates) is O, reading the task's tracker record E, a
  background command's output carries that command's stage (`file_roles`, `shell.actions`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentlens.process.file_roles import (
    Role,
    drop_root,
    file_role,
    in_tmp,
    named_by_folder_only,
    named_check,
    names_one_of,
    project_path,
    task_file_names,
)
from agentlens.process.labeler_paper_tools import (
    background_read,
    background_started,
    bound_path_writes,
    command_stage,
    diff_files,
    edit_change,
    intended_command,
    python_source,
    says_it_checks,
    searches_install,
    searches_tests,
    tool_stage,
)
from agentlens.process.labeler_scripts import script_name, scripts_run, written_scripts
from agentlens.process.stages import Stage
from agentlens.process.states import FAILED_EDIT
from agentlens.process.step_paths import is_shell, normalize_path, step_path
from agentlens.shell.actions import CommandAction, analyse, python_writes
from agentlens.trajectory import Step, ToolCategory

EDITS = (ToolCategory.EDIT, ToolCategory.CREATE_FILE)
LISTING = re.compile(r"^\s*(?:cd\s+\S+\s*&&\s*)?(?:ls|ll|tree|dir)\b")  # a listing, maybe filtered


@dataclass
class PaperContext:
    """Has the project been changed, which files were changed, which check files exist."""

    changed: bool = False
    edited: set[str] = field(default_factory=set)
    checks: set[str] = field(default_factory=set)
    scripts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    explored: bool = False  # has the run looked at anything yet (a step labelled E or V)?
    open_file: str = ""  # the file last opened, created or edited (SWE-agent's `edit` target)
    # each edited project file's edits still in place: (where, old, new), None if not a replacement
    replaced: dict[str, list[tuple[str, str, str] | None]] = field(default_factory=dict)
    shown: set[str] = field(default_factory=set)  # files a `git diff`/`git status` showed changed
    background: dict[str, Stage] = field(default_factory=dict)  # background command id: stage
    task: str = ""  # the run's task text (it names the files the task is about)
    task_files: frozenset[str] | None = None  # file names the task mentions, read when first needed
    attempted: str = ""  # the project file the edit just before failed on, if it did

    def after(self, before: Stage = "E") -> Stage:
        return "V" if self.changed else before

    def label(self, step: Step) -> Stage:
        attempted = self.attempted
        stage = self._background(step) or self._label(step)
        if self.attempted == attempted:
            self.attempted = ""  # only the very next look checks a failed edit
        started = background_started(step)
        if started:
            self.background[started] = stage
        self.explored = self.explored or stage in ("E", "V")
        self.shown |= {normalize_path(f) for f in diff_files(step)}
        if step.files and step.category in (*EDITS, ToolCategory.READ_FILE):
            self.open_file = step.files[0]
        return stage

    def _background(self, step: Step) -> Stage | None:
        """Reading a background command's output carries on that command: a run's output is the
        run (E or V); the output of the requested action itself (I) is checking it (V)."""
        started = self.background.get(background_read(step) or "")
        return "V" if started == "I" else started

    def _label(self, step: Step) -> Stage:
        """The reader's category decides reads, searches, listings and edits (even when they ran
        as shell lines); other shell lines are analysed command by command."""
        category = step.category
        if step.command and "<<" in step.command:  # readers may call a heredoc write an edit
            self.scripts.update(written_scripts(step.command))
        if category in EDITS:
            return self._edit(step)
        if category is ToolCategory.SEARCH and self.changed and searches_tests(step):
            return "V"  # looking for the tests to run against the change
        if (
            category is ToolCategory.SEARCH
            and self.changed
            and searches_install(step.command or "")
        ):
            return "O"  # searching for how to install a tool: environment setup
        if category in (ToolCategory.READ_FILE, ToolCategory.SEARCH, ToolCategory.LIST_DIR):
            listing = category is ToolCategory.LIST_DIR or LISTING.match(step.command or "")
            looked = step_path(step) or ("." if listing else "")
            if self.attempted and project_path(looked) == project_path(self.attempted):
                return "V"  # re-reading the file an edit just failed on: checking that edit
            checked = self._is_checked(looked, listing=bool(listing)) or says_it_checks(step)
            return "V" if self.changed and checked else "E"
        if category in (ToolCategory.THINK, ToolCategory.FINISH):
            return "O"
        if is_shell(step):
            return self._shell(step)
        return tool_stage(step) or "O"

    def _is_checked(self, paths: str, *, listing: bool = False) -> bool:
        """Does a look at `paths` (after a change) check that change? True for an edited file, its
        neighbourhood (its folder, or a listing of a folder beside it), a test or a check script,
        and a file the run's own `git diff`/`git status` showed as changed (labeling-guideline.md:
        "re-reading … an edited file … to confirm the edit" — the diff says it was edited)."""
        folders = {e.rsplit("/", 1)[0] if "/" in e else "" for e in self.edited}
        known = self.edited | self.checks | self.shown
        for written in (p.strip().rstrip("/") for p in paths.split(",")):
            if not written:
                continue
            path = project_path(written)
            if not path and listing:
                return True  # listing the project's root: a look over the whole changed project
            folder = path.rsplit("/", 1)[0] if "/" in path else ""
            # the edited file's folder, or (listed) a folder beside it; a sibling *file* is
            # another part of the code, looked at to learn it, not to confirm the edit
            near = path in folders or (listing and folder != "" and folder in folders)
            if path in known or near or names_one_of(path, known):
                return True
            if file_role(path) == "check":
                return True
        return False

    def _edit(self, step: Step) -> Stage:
        raw = step.files[0] if step.files else step_path(step)
        failed = bool(step.is_error) or bool(FAILED_EDIT.search((step.observation or "")[:300]))
        created = step.category is ToolCategory.CREATE_FILE
        role, path = self._role(raw, created=created), normalize_path(raw)
        if role == "source" and not failed:
            change = edit_change(step)
            if self._undoes(path, change):
                return "O"
            self.replaced.setdefault(path, []).append(change)
        stage = self._write(role, path, failed=failed)
        self.attempted = path if failed and role == "source" else ""
        return "I" if self._writes_fix_script([raw]) else stage

    def _undoes(self, path: str, change: tuple[str, str, str] | None) -> bool:
        """Does this edit put back what an earlier edit of the file replaced (`s/a/b/`, then
        `s/b/a/` at the same place)? That is reverting, not implementing: labeling-guideline.md's
        "cleanup … (git stash/restore …)", O. Once every edit of every file is undone the project
        is as it was, so "has the agent already changed project files?" is no again."""
        earlier = self.replaced.get(path, [])
        undone = next(
            (e for e in earlier if change and e and e == (change[0], *change[:0:-1])), None
        )
        if undone is None:
            return False
        earlier.remove(undone)
        if not earlier:
            self.edited.discard(path)
            self.changed = bool(self.edited)
        return True

    def _role(self, raw: str, *, created: bool) -> Role:
        """`file_role`, with what this run knows: a file it created as a check stays a check; a
        file written before the run has looked at anything is the deliverable (nothing has been
        explored, so there is no problem to reproduce), unless its name or folder says check."""
        role = file_role(raw, created=created)
        if role == "source" and self._created_check(normalize_path(raw)):
            return "check"
        if (
            role == "check"
            and self._task_names(raw)
            and not self._created_check(normalize_path(raw))
        ):
            return "source"  # the file the task is about, though it sits in a tests folder
        if role == "check" and not self.explored and not named_check(raw):
            return "source"
        return role

    def _task_names(self, raw: str) -> bool:
        """Does the task name this file, which only its folder makes a check? Then changing it is
        "making the change that solves the task" (labeling-guideline.md), not writing a test."""
        name = raw.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()
        if not self.task or not named_by_folder_only(raw):
            return False
        if self.task_files is None:
            self.task_files = task_file_names(self.task)
        return name in self.task_files

    def _created_check(self, path: str) -> bool:
        """A check file this run created, named relative (`create run.sh`) or with the repository
        folder in front (an editor reporting `/repo/run.sh`): at most one leading folder apart."""
        return any(path == c or drop_root(path) == c or drop_root(c) == path for c in self.checks)

    def _write(self, role: Role, path: str, *, failed: bool = False) -> Stage:
        if role == "notes":
            return "O"
        if role == "check":
            self.checks.add(path)
            return self.after()
        if not failed:
            self.changed = True
            self.edited.add(path)
        return "I"

    def _shell(self, step: Step) -> Stage:
        command = step.command or ""
        if command.lstrip().startswith("DISCUSSION"):  # SWE-agent: the model's prose ran
            return self._intended(intended_command(step))
        stage = command_stage(command, changed=self.changed)
        if stage == "I":
            self.changed = True
        if stage:
            return stage
        if not command.strip():
            code = str(step.arguments.get("code") or "")
            return self._writes(python_writes(code)) or self.after()
        source = python_source(step)
        if source is not None:  # Python, not a shell line: what it writes, else on to the shell
            written = self._writes([*python_writes(source), *bound_path_writes(source)])
            if written:
                return written
        if self.changed and searches_tests(step):
            return "V"  # looking for the tests to run against the change (as a file search)
        runs = [f for name in scripts_run(command) for f in self.scripts.get(name, ())]
        runs += bound_path_writes(command) if "python" in command else ()
        return self._actions(analyse(command), runs)

    def _intended(self, command: str | None) -> Stage:
        """A step whose command was the model's prose: its intent is the command in the agent's
        words (labeling-guideline.md: "label the intent"); without one it is reasoning, O. It
        did not run, so it changes nothing: an intended `edit` of the open file is a failed edit,
        and an intended write leaves the project as it was."""
        if command is None:
            return "O"
        if command.split(maxsplit=1)[0] == "edit":
            path = normalize_path(self.open_file)
            return self._write(self._role(self.open_file, created=False), path, failed=True)
        changed, edited = self.changed, set(self.edited)
        stage = self._actions(analyse(command))
        self.changed, self.edited = changed, edited
        return stage

    def _writes(self, paths: Sequence[str], *, created: bool = True) -> Stage | None:
        roles = [(self._role(p, created=created), p) for p in paths]
        for wanted in ("source", "check", "notes"):
            hits = [p for role, p in roles if role == wanted]
            if hits:
                stages = [self._write(wanted, normalize_path(p)) for p in hits]
                return stages[-1]
        return None

    def _actions(
        self, actions: Sequence[CommandAction], script_writes: Sequence[str] = ()
    ) -> Stage:
        """`script_writes`: files written by the run's own scripts that this line runs."""
        writes = [a for a in actions if a.action == "write"]
        if writes and all(a.restored for a in writes):
            return "O"  # a backup put back (`mv x.py.bak x.py`): cleanup, like `git restore`
        written = self._written(writes, script_writes) if writes or script_writes else None
        kinds = {a.action for a in actions}
        if written == "I":
            return "I"
        if "run" in kinds or written in ("E", "V"):
            return self.after()
        if written == "O":
            return "O"
        if "review" in kinds:
            return self.after()
        if "inspect" in kinds:
            looked = ",".join(normalize_path(p) for a in actions for p in a.paths)
            listing = any(a.listing for a in actions)
            looked = looked or ("." if listing else "")
            return "V" if self.changed and self._is_checked(looked, listing=listing) else "E"
        if "task" in kinds:
            return "E"  # reading the task's tracker record gathers the problem
        if any(self._is_check_script(p) for a in actions if a.action == "prepare" for p in a.paths):
            return self.after()  # `chmod +x run_test.sh`: readying the run's own check to run
        return "O"

    def _written(
        self, writes: Sequence[CommandAction], script_writes: Sequence[str]
    ) -> Stage | None:
        """The stage of a line's writes: new files, files its scripts write, and renames or copies
        onto a project name (a change of an existing file, not a new scratch one)."""
        written = self._writes([p for a in writes if not a.renamed for p in a.paths])
        written = _stronger(written, self._writes(script_writes))
        renamed = [p for a in writes if a.renamed for p in a.paths]
        written = _stronger(written, self._writes(renamed, created=False))
        fix_script = self.scripts and self._writes_fix_script([p for a in writes for p in a.paths])
        return "I" if fix_script else written

    def _writes_fix_script(self, paths: Sequence[str]) -> bool:
        """Does this line write a script of the run's whose code rewrites a file of the project
        (one the run did not create as a check, tests included)? Writing it is making the change
        through the terminal (labeling-guideline.md: "python that writes a file"), whatever the
        script is called; running it later is the write itself."""
        for path in paths:
            targets = self.scripts.get(script_name(path), ())
            if any(not in_tmp(t) and not self._created_check(normalize_path(t)) for t in targets):
                return True
        return False

    def _is_check_script(self, path: str) -> bool:
        return file_role(path) == "check" or self._created_check(normalize_path(path))


def _stronger(first: Stage | None, second: Stage | None) -> Stage | None:
    """Of two writes' stages, the implementation if either is one, else the first known."""
    return "I" if "I" in (first, second) else (first or second)


def label_steps_paper(steps: Sequence[Step], task: str | None = None) -> list[Stage]:
    """Label tool steps in order with the careful-human rules above; `task` is the run's task
    text, when known (it names the files the task is about)."""
    context = PaperContext(task=task or "")
    return [context.label(step) for step in steps]
