"""Did a step fail: the one rule for every caller that asks (the judge's compaction and its
` ERROR` marks, telemetry's tool success, the viewer's error count, step value's
`last_status`). Process scoring reads only the reader's flag: its `paper` and `sdk-compat`
labels reproduce published ones.

The reader's flag (`Step.is_error`) decides first. Where the format has none, the result is read
for error markers (its first 4,000 characters), but only the part that is the tool's own report:
code a step merely shows is no error report, whatever its `throws Exception` or `except
ValueError as error:` says. Shown code is
* the command's own lines, echoed back by the terminal (a heredoc the agent typed);
* numbered listing lines: `42:` of SWE-agent's file window, `    42<tab>` of `cat -n`, `Line 42:`
  of `search_file`;
* a unified diff, from its header to its last hunk line (SWE-agent's `submit`, `git diff`);
* all that a step which only reads, searches or lists files prints (its category, or its
  command's, is read_file, search or list_dir): such a step failed only when it could not reach
  its file (`No such file`, `Permission denied`, `command not found`, SWE-agent's `File … not
  found`).
A result that begins `ERROR:` is the tool harness's own report and always fails (OpenHands-style
editors and terminals: "ERROR: No replacement was performed", "ERROR: Invalid `path`
parameter"), also behind the "The file was edited successfully." that AgentLens-Bench's converter
put before most refused edits. Besides the usual markers, two reports of SWE-agent's harness
count: an edit its linter refused ("Your proposed edit has introduced new syntax error(s)") and
a command it stopped ("EXECUTION TIMED OUT").
"""

from __future__ import annotations

import re
from functools import lru_cache

from agentlens.shell.categories import INSPECTING, categorize_command
from agentlens.trajectory import Step, ToolCategory

READ_CHARS = 4000
CACHED_LENGTH = 4096  # a longer command (a heredoc of a whole file) is not kept in the cache
HARNESS_ERROR = re.compile(r"\A\s*(?:The file was edited successfully\.\s*)?ERROR:")
ERROR_MARKERS = re.compile(
    r"Traceback|\bError\b|\berror:|\w*Exception\b|FAILED|command not found|No such file|not found"
    r"|^\w+Error: |Your proposed edit has introduced|EXECUTION TIMED OUT",
    re.MULTILINE,
)
ACCESS_FAILURE = re.compile(
    r"No such file|command not found|Permission denied|Is a directory"
    r"|^(?:Error: )?(?:File|Directory)\b.*\bnot found",
    re.MULTILINE,
)
LISTED_LINE = re.compile(r"^(?:\s*\d+(?::|\t|→)|Line \d+:)")
DIFF_HEADER = re.compile(r"^(?:diff --git |--- \S)")
DIFF_LINE = re.compile(
    r"^(?:[-+ @\\]|index |(?:new|deleted) file mode|similarity |rename |(?:old|new) mode|Binary files|$)"
)


def failed(step: Step) -> bool:
    """The reader's error flag, else error markers in the result's own report (module docstring)."""
    if step.is_error is not None:
        return step.is_error
    if not step.observation:
        return False
    text, command = step.observation[:READ_CHARS], step.command
    if command is None or len(command) <= CACHED_LENGTH:
        return _reports_failure_cached(text, command, step.category)
    return _reports_failure(text, command, step.category)


@lru_cache(maxsize=4096)  # the judge's compaction asks again at every rendering of a step
def _reports_failure_cached(text: str, command: str | None, category: ToolCategory | None) -> bool:
    return _reports_failure(text, command, category)


def _reports_failure(text: str, command: str | None, category: ToolCategory | None) -> bool:
    if HARNESS_ERROR.match(text):
        return True
    report = own_report(text, command)
    if _inspecting(command, category):
        return bool(ACCESS_FAILURE.search(report))
    return bool(ERROR_MARKERS.search(report))


def only_inspects(step: Step) -> bool:
    """A step that reads, searches or lists files and runs nothing (its output is their text)."""
    return _inspecting(step.command, step.category)


def _inspecting(command: str | None, category: ToolCategory | None) -> bool:
    if category in INSPECTING:
        return True
    return command is not None and categorize_command(command) in INSPECTING


def own_report(text: str, command: str | None) -> str:
    """`text` without the code it shows: echoed command lines, numbered listing lines, diffs."""
    typed = {line.strip() for line in (command or "").splitlines() if line.strip()}
    kept: list[str] = []
    in_diff = False
    for line in text.splitlines():
        if DIFF_HEADER.match(line):
            in_diff = True
            continue
        in_diff = in_diff and bool(DIFF_LINE.match(line))
        if in_diff or LISTED_LINE.match(line) or line.strip() in typed:
            continue
        kept.append(line)
    return "\n".join(kept)
