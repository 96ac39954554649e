"""Did a step fail: the one rule for every caller that asks (the judge's compaction and its
` ERROR` marks, telemetry's tool success, the viewer's error count, step value's
`last_status`). Process scoring keeps its own rule, to match the release its `paper` and
`sdk-compat` labels reproduce: the reader's flag, and for an edit or a creation
`process.states.FAILED_EDIT` (`ERROR:`, "No replacement was performed", "did not appear
verbatim") in the result's first 300 characters.

The reader's flag (`Step.is_error`) decides first. Where the format has none, the result is read
for error markers (its first 4,000 characters), but only the part that is the tool's own report:
code a step merely shows is no error report, whatever its `throws Exception` or `except
ValueError as error:` says. Shown code is
* the command's own lines, echoed back by the terminal (a heredoc the agent typed);
* numbered listing lines: `42:` of SWE-agent's file window, `    42<tab>` of `cat -n`, `Line 42:`
  of `search_file`, in a step that shows files (a read, search, listing or edit); elsewhere only
  a run of consecutive numbers is a listing (a lone `3:ValueError: …` of `grep -n` is a report),
  and a clock time (`12:01:02 Error: …`) never is;
* a unified diff, from its header (`diff --git`, or a `--- ` line with its `+++ ` line after it:
  `go test`'s `--- FAIL: TestParse` is no header) to its last hunk line (SWE-agent's `submit`);
* all that a step which only reads, searches or lists files prints (its category, or its
  command's, is read_file, search or list_dir): such a step failed only when the program's own
  diagnostic line says it could not reach its file (`cat: x: No such file or directory`, `grep:
  x: Permission denied`, `bash: rg: command not found`, SWE-agent's `File … not found`), never
  because a file's code or a grep hit (`src/io.py:3:`) says so.
A result that begins `ERROR:` is the tool harness's own report and always fails (OpenHands-style
editors and terminals: "ERROR: No replacement was performed", "ERROR: Invalid `path`
parameter"), also behind the "The file was edited successfully." that AgentLens-Bench's converter
put before most refused edits. Besides the usual markers, two reports of SWE-agent's harness
count: an edit its linter refused ("Your proposed edit has introduced new syntax error(s)") and
a command it stopped ("EXECUTION TIMED OUT").
"""

from __future__ import annotations

import hashlib
import re

from agentlens.shell.categories import INSPECTING, categorize_command
from agentlens.trajectory import Step, ToolCategory

READ_CHARS = 4000
# verdicts by a digest of what decides them: keys of whole results and commands held ~130 MB of
# CJK/emoji text for the viewer's lifetime (benchmarks/step_failure_cache.py)
CACHED_VERDICTS = 4096
_verdicts: dict[bytes, bool] = {}
HARNESS_ERROR = re.compile(r"\A\s*(?:The file was edited successfully\.\s*)?ERROR:")
ERROR_MARKERS = re.compile(
    r"Traceback|\bError\b|\berror:|\w*Exception\b|FAILED|command not found|No such file|not found"
    r"|^(?:\d+:)?\w+Error: |Your proposed edit has introduced|EXECUTION TIMED OUT",
    re.MULTILINE,
)
# the program's own diagnostic (`cat: x: No such file or directory`, `bash: javac: command not
# found`, `/bin/sh: 1: x: not found`): it begins with the program's name and ends with the
# reason, where a grep hit (`path:12:`) or a file's code (`raise OSError("No such file")`) does not
ACCESS_FAILURE = re.compile(
    r"^(?![^\s:]+:\d+:)[\w./+-]+: .*?(?:No such file(?: or directory)?|Permission denied|Is a directory"
    r"|command not found|: not found)\s*$"
    r"|^(?:Error: )?(?:File|Directory)\b.*\bnot found",
    re.MULTILINE,
)
LISTED_LINE = re.compile(r"^(?:\s*(\d+)(?::|\t|→)|Line (\d+):)")
CLOCK_TIME = re.compile(r"^\s*\d+:\d\d")  # `12:01:02 Error: …` of a log is no line number
# steps whose numbered lines are a listing: a file window, `cat -n`, an edit's snippet, `Line 42:`
LISTING = (*INSPECTING, ToolCategory.EDIT, ToolCategory.CREATE_FILE)
DIFF_START = re.compile(r"^diff --git ")
OLD_FILE = re.compile(r"^--- \S")  # a diff header only with its `+++ ` line after it
NEW_FILE = "+++ "
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
    key = _digest(text, command, step.category)
    verdict = _verdicts.get(key)
    if verdict is None:  # the judge's compaction asks again at every rendering of a step
        verdict = _reports_failure(text, command, step.category)
        if len(_verdicts) >= CACHED_VERDICTS:
            del _verdicts[next(iter(_verdicts))]  # the oldest verdict
        _verdicts[key] = verdict
    return verdict


def _digest(text: str, command: str | None, category: ToolCategory | None) -> bytes:
    """Each part length-prefixed: no split of one result between text and command is another's."""
    digest = hashlib.blake2b(b"-" if command is None else b"+", digest_size=16)
    for part in (text, command or "", category or ""):
        encoded = part.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "little") + encoded)
    return digest.digest()


def _reports_failure(text: str, command: str | None, category: ToolCategory | None) -> bool:
    if HARNESS_ERROR.match(text):
        return True
    report = own_report(text, command, category)
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


def own_report(text: str, command: str | None, category: ToolCategory | None = None) -> str:
    """`text` without the code it shows: echoed command lines, numbered listing lines, diffs."""
    typed = {line.strip() for line in (command or "").splitlines() if line.strip()}
    lines = text.splitlines()
    shown = diff_lines(lines) | listed_lines(lines, listing_step(command, category))
    kept = [x for i, x in enumerate(lines) if i not in shown and x.strip() not in typed]
    return "\n".join(kept)


def diff_lines(lines: list[str]) -> set[int]:
    """The indexes of a unified diff's lines: from `diff --git`, or a `--- ` line with its `+++ `
    line after it (a bare `--- FAIL: TestParse` of `go test` is no header), to its last hunk line."""
    found: set[int] = set()
    in_diff = False
    for i, line in enumerate(lines):
        header = bool(DIFF_START.match(line)) or (
            bool(OLD_FILE.match(line)) and i + 1 < len(lines) and lines[i + 1].startswith(NEW_FILE)
        )
        in_diff = header or (in_diff and bool(DIFF_LINE.match(line)))
        if in_diff:
            found.add(i)
    return found


def listed_lines(lines: list[str], listing: bool) -> set[int]:
    """The indexes of numbered listing lines: every numbered line of a step that shows files
    (`listing`), elsewhere only runs of consecutive numbers; never a clock time (`12:01:02`)."""
    numbers = {i: _line_number(x) for i, x in enumerate(lines) if not CLOCK_TIME.match(x)}
    numbered = {i: n for i, n in numbers.items() if n is not None}
    if listing:
        return set(numbered)
    return {
        i
        for i, n in numbered.items()
        if numbered.get(i - 1) == n - 1 or numbered.get(i + 1) == n + 1
    }


def _line_number(line: str) -> int | None:
    match = LISTED_LINE.match(line)
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


def listing_step(command: str | None, category: ToolCategory | None) -> bool:
    """A step that shows files (a read, search or listing, an edit's snippet): its numbered lines
    are a listing."""
    if category in LISTING:
        return True
    return command is not None and categorize_command(command) in LISTING
