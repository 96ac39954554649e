"""`sdk-compat` labeler: the released swe-trace-sdk intent labeler's behaviour, quirks included.

Written from the behavioural specification (spec-process-scoring.md §3.4-§3.6), not from the
release's code. Every quirk listed in §3.7 is kept on purpose: the stored labels of AgentLens-Bench
and all released reference numbers depend on them (parity: 10,442/10,442 on the dev traces).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentlens.process.stages import Stage
from agentlens.process.step_paths import is_shell, step_path
from agentlens.trajectory import Step, ToolCategory

_I = re.IGNORECASE
CD = r"cd\s+[^&;]+[&;]+\s*"
SRC = r"(?:py|js|ts|java|cs|rb|go|rs|cpp|c|h)"
HEREDOC = r"(?:py|js|ts|jsx|tsx|java|cs|rb|go|rs|cpp|c|h|csproj|json|yaml|yml|xml|toml|cfg|ini|sh)"
SEDI = r"(?:py|js|ts|java|cs|rb|go|rs|cpp|c|h|csproj|json|yaml|yml|xml|toml)"

TEST_FILE = re.compile(
    r"(?:^|[/\\])(?:test_|[^/\\]*_test\.|tests?[/\\]|spec[/\\]|__tests__[/\\]"
    r"|[^/\\]*\.test\.|[^/\\]*\.spec\.|conftest\.|pytest)",
    _I,
)
SUMMARY_FILE = re.compile(
    r"(?:(?:^|/)(?:fix_summary|notes|changelog|summary|report)|_summary|_report|_notes)\.[a-z]+$",
    _I,
)
TEST_COMMAND = re.compile(
    r"(?:^|\s|&&|;|/)(?:pytest|python\d?\s+(?:-m\s+)?(?:pytest|unittest)"
    r"|python\d?\s+(?:test_|tests/|run_tests)|npm\s+(?:run\s+)?test|npx\s+(?:jest|mocha|vitest)"
    r"|jest|mocha|(?:cargo|go|dotnet|make)\s+test|tox|nosetests)",
    _I,
)
TEMP_WRITE = re.compile(r"(?:cat|echo|printf|tee)\s+.*>\s*/tmp/", _I)
CLEANUP = re.compile(
    rf"^\s*(?:{CD})*(?:rm\s+(?:-[rfv]+\s+)*\S+|git\s+stash(?:\s+(?:pop|drop|apply))?"
    r"|git\s+checkout\s+--\s*\.|git\s+restore\b|git\s+clean\b|mkdir\s+-?p?\s)\s*$",
    _I,
)
CODE_WRITING = (
    re.compile(r"python\d?\s+-c\s+[\"'].*(?:open\(|write\(|with\s+open)", _I | re.DOTALL),
    re.compile(rf"cat\s+>\s*\S+\.{HEREDOC}\s*<<", _I),
    re.compile(rf"(?:echo|printf)\s+.*>\s*\S+\.{SRC}", _I),
    re.compile(rf"sed\s+-i\s+.*\S+\.{SEDI}", _I),
    re.compile(rf"tee\s+\S+\.{SRC}", _I),
)
WRITTEN_FILE = re.compile(rf"['\"]?([^'\"\s>]+\.{SRC})")
EXPLORATION = re.compile(
    rf"^\s*(?:{CD})?(?:grep|rg|ag|ack|(?:find|head|tail|less|more|wc|ls|dir|tree|file|jq|realpath)\b"
    r"|sed\s+-?n|git\s+(?:log|show|blame))",
    _I,
)
CAT_EXPLORATION = re.compile(rf"^\s*(?:{CD})?cat\b(?!\s*>)", _I)
GIT_REVIEW = re.compile(r"\bgit\s+(?:diff|status)\b", _I)
FLAGS = r"(?:-\S+\s+)*"
VERIFICATION = (
    re.compile(rf"\bpython\d?\s+{FLAGS}\S+\.py\b", _I),
    re.compile(r"\bpython\d?\s+-m\s+\S+", _I),
    re.compile(rf"\bnode\s+{FLAGS}\S+\.(?:js|ts|mjs|cjs)\b", _I),
    re.compile(rf"\b(?:bash|sh|zsh|ksh)\s+{FLAGS}\S+\.sh\b", _I),
    re.compile(rf"\bruby\s+{FLAGS}\S+\.rb\b", _I),
    re.compile(rf"\bphp\s+{FLAGS}\S+\.php\b", _I),
    re.compile(rf"\bperl\s+{FLAGS}\S+\.pl\b", _I),
    re.compile(rf"\bjava\s+{FLAGS}\S+", _I),
    re.compile(
        r"\b(?:make|cmake|cargo\s+run|go\s+(?:run|build)|npm\s+(?:start|run|exec)|npx\s+\S+"
        r"|(?:yarn|pnpm)\s+(?:start|run)|pip\s+install|dotnet\s+(?:run|build)"
        r"|mvn\s+(?:compile|package|exec)|gradle\s+(?:run|build)|docker\s+(?:run|compose|build)"
        r"|uvicorn|gunicorn|flask\s+run|streamlit\s+run)\b",
        _I,
    ),
    re.compile(r"\b(?:curl|wget|https?)\s", _I),
    re.compile(r"\./\S+"),
)
MODIFYING = re.compile(
    r"\bsed\s+-i\b|\bpatch\b|\btee\s|>\s*\S|\b(?:chmod|mv|cp|install)\b|\b(?:pip|npm)\s+install\b"
    r"|\brm\s|\bgit\s+checkout\s+--|\bgit\s+restore\b",
    _I,
)
EDITS = (ToolCategory.EDIT, ToolCategory.CREATE_FILE)


def strip_cd(command: str, *, once: bool = False) -> str:
    """Drop the leading `cd DIR &&` prefix(es) and surrounding whitespace."""
    pattern = rf"^\s*(?:{CD})" + ("" if once else "+")
    return re.sub(pattern, "", command, flags=_I).strip()


def is_test_file(path: str) -> bool:
    return bool(path) and bool(TEST_FILE.search(path))


def is_summary_file(path: str) -> bool:
    if not path:
        return False
    return path.startswith(("/tmp/", "tmp/")) or bool(SUMMARY_FILE.search(path))


def is_test_command(cmd: str) -> bool:
    return bool(TEST_COMMAND.search(cmd))


def is_cleanup_command(cmd: str) -> bool:
    body = strip_cd(cmd)
    return bool(body) and (bool(TEMP_WRITE.search(body)) or bool(CLEANUP.search(cmd)))


def is_code_writing(cmd: str) -> bool:
    body = strip_cd(cmd)
    return bool(cmd) and any(p.search(body) for p in CODE_WRITING)


def is_exploration(cmd: str) -> bool:
    return bool(EXPLORATION.search(cmd)) or bool(CAT_EXPLORATION.search(cmd))


def is_verification(cmd: str) -> bool:
    body = strip_cd(cmd, once=True)
    if not body or EXPLORATION.search(cmd):
        return False
    return any(p.search(body) for p in VERIFICATION)


def is_modifying(cmd: str) -> bool:
    return bool(MODIFYING.search(cmd))


@dataclass
class SdkContext:
    """Running context: has a source change happened, and which files were changed."""

    implemented: bool = False
    files: set[str] = field(default_factory=set)

    def stage(self, step: Step, near_end: bool) -> Stage:
        category = step.category
        if is_shell(step):
            return self._terminal_stage(step.command or "", near_end)
        if category in (ToolCategory.SEARCH, ToolCategory.LIST_DIR):
            return "E"
        if category is ToolCategory.THINK:
            return "O"
        if category in EDITS:
            return self._edit_stage(step_path(step))
        if category is ToolCategory.READ_FILE:
            return self._read_stage(step_path(step))
        return "V" if step.is_error and self.implemented else "O"

    def _edit_stage(self, path: str) -> Stage:
        if is_test_file(path):
            return "V" if self.implemented else "E"
        return "O" if is_summary_file(path) else "I"

    def _read_stage(self, path: str) -> Stage:
        if is_test_file(path):
            return "V" if self.implemented else "E"
        return "V" if self.implemented and path and path in self.files else "E"

    def _terminal_stage(self, cmd: str, near_end: bool) -> Stage:
        if is_test_command(cmd):
            return "V"
        if is_cleanup_command(cmd):
            return "O"
        if is_code_writing(cmd):
            return "I"
        if self.implemented and (is_verification(cmd) or GIT_REVIEW.search(cmd)):
            return "V"
        if is_exploration(cmd):
            return "E"
        return "V" if near_end else "E"

    def update(self, step: Step, stage: Stage) -> None:
        if step.category in EDITS and stage == "I" and not is_shell(step):
            self.implemented = True
            self.files.update(p.strip() for p in step_path(step).split(",") if p.strip())
        elif is_shell(step):
            cmd = step.command or ""
            if is_code_writing(cmd):
                self.implemented = True
                written = WRITTEN_FILE.search(cmd)
                if written:
                    self.files.add(written[1])
            elif not self.implemented and is_modifying(cmd):
                self.implemented = True


def label_steps_sdk(steps: Sequence[Step]) -> list[Stage]:
    """Label tool steps in order. Position counts the implied initial state, as the release does."""
    context = SdkContext()
    total = len(steps) + 1
    stages: list[Stage] = []
    for position, step in enumerate(steps, start=1):
        stage = context.stage(step, near_end=position >= 0.8 * total)
        context.update(step, stage)
        stages.append(stage)
    return stages
