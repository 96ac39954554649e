"""Guideline readings of steps that are not code reading or editing, for the `paper` labeler.

Each rule reads labeling-guideline.md for tools and commands the reader files under no code
category (ToolCategory.OTHER) or under a plain shell run:

* a clarifying question to the user (Claude Code `AskUserQuestion`, Cline `ask_followup_question`,
  a `chat_npc` message that asks) is E: "gathering information about … the problem";
* a message that only reports or acknowledges (no question) is O: bookkeeping;
* delegating exploration to a subagent (Claude Code `Task` with `subagent_type` Explore) is E;
* in a non-coding task, the requested action itself — creating or linking tracker records
  (`bd create`, `bd dep add` between the records, `gh issue create`), mailing a file — is I:
  "making the change that solves the task" (a status update, `bd update`, stays bookkeeping);
* asking which toolchain is installed (`which javac`, `java -version`) once the run has changed
  files is O: "environment … setup that neither explores nor … checks the solution" (before any
  change it is probing the problem, E, by the ordinary rules); so is searching, in words, for
  how to install something (`search_dir "JDK installation instructions"`) once the run has
  changed files;
* SWE-agent turns whose output format broke run the model's prose (`DISCUSSION …`) as the command
  while the intended command stands in the agent's words: the step's intent is that command
  (`intended_command`); prose alone is reasoning, O.

Helpers for context rules in `labeler_paper` (each names its guideline line there):
`edit_change` (what an edit replaced, to see an edit undo an earlier one), `searches_tests` (a
file search for tests), `diff_files` (the files a `git diff`/`git status` shows as changed) and
`bound_path_writes` (Python that writes a file through a `Path` held in a variable).
"""

from __future__ import annotations

import re
import shlex

from agentlens.process.stages import Stage
from agentlens.trajectory import Step

ASK_USER_TOOLS = {
    "askuserquestion",
    "ask_user",
    "ask_user_question",
    "ask_followup_question",
    "request_user_input",
}
SUBAGENT_TOOLS = {"task", "agent"}
EXPLORING_SUBAGENTS = {"explore", "explorer", "research", "researcher"}
# a command's start: the line's start, or after `&&`, `||`, `;`, `|`
START = r"(?:^|[;&|]\s*)"
TRACKER_CREATE = re.compile(
    START
    + r"(?:bd|beads)\s+(?:create|dep\s+add)\b|"
    + START
    + r"(?:gh|glab|jira)\s+issue\s+create\b"
)
MAIL_ATTACHMENT = re.compile(START + r"(?:mail|mailx|mutt)\b[^|;&]*\s-[aA]\s")
MESSAGE = re.compile(r"^\s*chat_npc\s")
# a search for a phrase (three words or more) about installing: `grep -r "how to install maven"`
INSTALL_SEARCH = re.compile(
    r"^\s*(?:search_dir|search_file|grep|rg)\b[^'\"]*['\"]([^'\"]*\s[^'\"]*)['\"]"
)
INSTALL_WORD = re.compile(r"\binstall(?:ation|ing|s)?\b|\bsetup instructions\b", re.IGNORECASE)
TOOLCHAIN_PROBE = re.compile(
    r"^\s*(?:which|whereis|type|command\s+-v)\s+[\w.+-]+\s*$"
    r"|^\s*[\w.+-]+\s+(?:--version|-version|-V)\s*$"
)
# SWE-agent's own commands, and programs a model commonly puts first on a command line.
INTENDED_PROGRAMS = {
    "open", "goto", "scroll_up", "scroll_down", "create", "edit", "search_file", "search_dir",
    "find_file", "submit", "ls", "cat", "grep", "find", "head", "tail", "python", "python3",
    "pytest", "javac", "java", "mvn", "gradle", "./gradlew", "git", "rm", "mkdir", "cd", "bash",
}  # fmt: skip
FENCE = re.compile(r"^\s*```\w*\s*$", re.MULTILINE)
OLD_NEW_KEYS = (("old_str", "new_str"), ("oldString", "newString"), ("old_string", "new_string"))
# `sed -i '413s/a/b/' f`: the address, then the substitution (any delimiter)
SED_SUBSTITUTE = re.compile(r"\bsed\s+-i\S*\s+(['\"])(\d*(?:,\d+)?)s(.)(.*?)\3(.*?)\3\w*\1")
# the file-name pattern of a search: `find . -name "*test*.py"`, `find_file "FooTest.java"`
NAME_PATTERN = re.compile(r"-i?(?:name|path)\s+['\"]?([^'\"\s]+)|^\s*find_file\s+['\"]?([^'\"\s]+)")
TEST_NAME = re.compile(r"test|spec", re.IGNORECASE)
DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/|^\s*(?:modified|new file|deleted):\s+(\S+)", re.M)
# Python typed where a shell line goes (an IPython cell, or a model pasting code into the terminal):
# the first line is a Python statement no shell line starts with.
PYTHON_LINE = re.compile(
    r"^\s*(?:import \w|from [\w.]+ import |def \w+\(|class \w+[(:]|with open\(|print\(|"
    r"\w+\s+=\s+\S|\w+\s*=\s*(?:\"\"\"|'''))"
)
IPYTHON_TOOLS = {"run_ipython", "ipython", "execute_ipython_cell", "jupyter"}
# Claude Code runs a command in the background, then reads its output file or asks for it
BACKGROUND_ID = re.compile(r"running in background with ID: (\w+)")
BACKGROUND_OUTPUT = re.compile(r"/tasks/(\w+)\.output\b")
OUTPUT_TOOLS = {"taskoutput", "bashoutput"}
# the agent saying a look is to check its change ("Let me verify the implementation …")
CHECK_WORDS = re.compile(
    r"\b(?:verify|verifies|verified|confirm|confirms|make sure|double[- ]check)\b", re.IGNORECASE
)
BOUND_PATH = re.compile(r"\b(\w+)\s*=\s*(?:pathlib\.)?Path\(\s*[rbuf]?['\"]([^'\"\s]+)['\"]\s*\)")


def tool_stage(step: Step) -> Stage | None:
    """The stage of a non-shell tool the reader filed under no category, if a rule covers it."""
    name = (step.tool_name or "").strip().lower()
    if name in ASK_USER_TOOLS:
        return "E"  # a clarifying question gathers information about the task
    if name in SUBAGENT_TOOLS:
        kind = str(step.arguments.get("subagent_type") or "").lower()
        return "E" if kind in EXPLORING_SUBAGENTS else None
    return None


def command_stage(command: str, *, changed: bool) -> Stage | None:
    """The stage of a shell line whose intent is not code work, if a rule covers it."""
    if TRACKER_CREATE.search(command) or MAIL_ATTACHMENT.search(command):
        return "I"  # the non-coding task's requested action
    if MESSAGE.match(command):
        return "E" if "?" in _message_text(command) else "O"
    if changed and (TOOLCHAIN_PROBE.match(command) or searches_install(command)):
        return "O"
    return None


def searches_install(command: str) -> bool:
    """A search for a phrase about installing a tool: environment setup, not the codebase."""
    phrase = INSTALL_SEARCH.match(command)
    words = phrase[1].split() if phrase else []
    prose = len(words) >= 3 and all(w.isalpha() for w in words)  # words, not code (`def install`)
    return prose and bool(INSTALL_WORD.search(" ".join(words)))


def _message_text(command: str) -> str:
    """The text of `chat_npc NAME "text"` (everything after the name)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return " ".join(words[2:])


def intended_command(step: Step) -> str | None:
    """The command in the agent's words of an SWE-agent `DISCUSSION` step, if they hold one."""
    text = FENCE.sub("", step.text or "").strip()
    first = text.split(maxsplit=1)[0] if text else ""
    return text if first in INTENDED_PROGRAMS else None


def edit_change(step: Step) -> tuple[str, str, str] | None:
    """(where, old text, new text) of a replacing edit: an editor's old/new strings, or a
    `sed -i 's/old/new/'` with its line address; None for other edits."""
    for old_key, new_key in OLD_NEW_KEYS:
        old, new = step.arguments.get(old_key), step.arguments.get(new_key)
        if isinstance(old, str) and isinstance(new, str):
            return ("", old, new)
    match = SED_SUBSTITUTE.search(step.command or "")
    return (match[2], match[4], match[5]) if match else None


def searches_tests(step: Step) -> bool:
    """Does a file search look for test files by name (`find -name "*test*"`, `find_file
    XTest.java`, a glob `**/test_*.py`)?"""
    command = step.command or ""
    named = "name" in command or "path" in command or "find_file" in command  # NAME_PATTERN's
    names = [a or b for a, b in NAME_PATTERN.findall(command)] if named else []
    names.append(
        str(step.arguments.get("pattern") or "") if "glob" in (step.tool_name or "").lower() else ""
    )
    return any(TEST_NAME.search(name) for name in names)


def diff_files(step: Step) -> set[str]:
    """The files a `git diff` or `git status` step shows as changed."""
    if not re.search(r"\bgit\s+(?:diff|status)\b", step.command or ""):
        return set()
    return {a or b for a, b in DIFF_FILE.findall(step.observation or "")}


def bound_path_writes(command: str) -> tuple[str, ...]:
    """Files Python writes through a `Path` held in a variable: `p = Path('pkg/x.py')` …
    `p.write_text(s)` (labeling-guideline.md: "python that writes a file")."""
    return tuple(
        path
        for name, path in BOUND_PATH.findall(command)
        if re.search(rf"\b{re.escape(name)}\.write_(?:text|bytes)\(", command)
    )


def python_source(step: Step) -> str | None:
    """The Python a step runs as its whole command (an IPython cell, code pasted into the
    terminal), or None for a shell line."""
    command = step.command or ""
    if (step.tool_name or "").lower() in IPYTHON_TOOLS or PYTHON_LINE.match(command):
        return command
    return None


def background_started(step: Step) -> str | None:
    """The id of the background command this step started (Claude Code `run_in_background`)."""
    head = (step.observation or "")[:300]
    found = BACKGROUND_ID.search(head) if "background" in head else None
    return found[1] if found else None


def background_read(step: Step) -> str | None:
    """The id of the background command whose output this step reads: its output file
    (`tail …/tasks/<id>.output`) or the tool that fetches it (`TaskOutput`, `BashOutput`)."""
    if (step.tool_name or "").lower() in OUTPUT_TOOLS:
        value = step.arguments.get("task_id") or step.arguments.get("bash_id")
        return str(value) if value else None
    where = " ".join([step.command or "", *step.files])
    found = BACKGROUND_OUTPUT.search(where) if ".output" in where else None
    return found[1] if found else None


def says_it_checks(step: Step) -> bool:
    """Does the agent's own note on this step (its `thought`, or the text before the call) say
    the look is to verify or confirm? labeling-guideline.md: "judge by intent in context"."""
    note = str(step.arguments.get("thought") or "") or (step.text or "")
    first = re.split(r"(?<=[.!?:])\s", note.strip(), maxsplit=1)[0] if note.strip() else ""
    return bool(CHECK_WORDS.search(first))
