"""States: one per tool call plus a synthetic initial state (spec §2).

A `ProcState` carries exactly what equivalence, matching, signals and waste read, computed once per
step (the "interning" that keeps scoring fast). `sdk-compat` takes the release's own per-state
fields from `Step.raw` when the input is an AgentLens-Bench trace; otherwise (and always under
`paper`) every field is derived from the canonical step: category, command, files, arguments,
observation. With `repo_relative` (`ProfileConfig.repo_relative_paths`, off in every profile) a
state names its file as the repository does (`shell.working_dir.repo_files`: resolved against the
step's working directory, checkout root dropped), so `/<owner>__<repo>/src/X.java`, `src/X.java`
and `X.java` after `cd src` are one state name; without it each keeps the name as written.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentlens.process.stages import Stage, as_stage
from agentlens.process.step_paths import normalize_path
from agentlens.shell.working_dir import norm_path, repo_files
from agentlens.trajectory import Step, ToolCategory, Trajectory

CANONICAL_TOOL = {
    ToolCategory.READ_FILE: "read_file",
    ToolCategory.LIST_DIR: "list_dir",
    ToolCategory.SEARCH: "grep_search",
    ToolCategory.EDIT: "replace_string_in_file",
    ToolCategory.CREATE_FILE: "create_file",
    ToolCategory.RUN_COMMAND: "run_in_terminal",
    ToolCategory.THINK: "think",
}
PATH_KEYS = ("filePath", "file_path", "path", "filename", "file")
# An editor's refusal ("ERROR: No replacement was performed", "Invalid `path`") often comes without
# an error flag; the edit did not happen (the paper labeler reads it the same way).
FAILED_EDIT = re.compile(r"ERROR:|No replacement was performed|did not appear verbatim", re.I)


@dataclass(eq=False, slots=True)
class ProcState:
    """One state. `stage` is "" for the initial state (and any unlabelled one)."""

    step_no: int
    tool: str = ""
    stage: str = ""
    file_path: str = ""
    resulting_state: str = ""
    content_hash: str = ""
    content_description: str = ""
    scope_path: str = ""
    function_name: str = ""
    class_name: str = ""
    line_range: tuple[int, int] | None = None
    observation: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    has_entry: bool = False
    is_initial: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    step_index: int = -1
    source: Step | None = None
    support: int = 1
    uid: str = ""
    term: tuple[bool, str, str, str, str, str] | None = None
    mfiles: frozenset[str] | None = None

    @property
    def command(self) -> str:
        value = self.args.get("command", "")
        return value if isinstance(value, str) else ""


def initial_state(step_index: int = -1, source: Step | None = None) -> ProcState:
    return ProcState(
        step_no=0,
        resulting_state="initial",
        observation="<initial>",
        is_initial=True,
        step_index=step_index,
        source=source,
    )


def states_from_trajectory(
    traj: Trajectory,
    labels: Sequence[Stage | None],
    *,
    use_raw: bool,
    repo_relative: bool = False,
) -> list[ProcState]:
    """Initial state + one state per labelled tool step, in step order."""
    first = traj.steps[0] if traj.steps and traj.steps[0].kind != "tool" else None
    states = [initial_state(first.index if first else -1, first)]
    for step, label in zip(traj.steps, labels, strict=True):
        if step.kind != "tool" or label is None:
            continue
        state = state_from_step(step, len(states), use_raw=use_raw, repo_relative=repo_relative)
        state.stage = label
        states.append(state)
    return states


def state_from_step(
    step: Step, step_no: int, *, use_raw: bool, repo_relative: bool = False
) -> ProcState:
    raw = step.raw if use_raw and isinstance(step.raw, dict) else None
    if raw and raw.get("log_entry"):
        state = _from_raw(raw, step_no)
    else:
        state = _derive(step, step_no, repo_relative)
    state.step_index = step.index
    state.source = step
    if step.usage is not None:
        state.input_tokens = step.usage.prompt_tokens
        state.output_tokens = step.usage.completion_tokens
    return state


def _from_raw(raw: dict[str, Any], step_no: int) -> ProcState:
    entry = raw.get("log_entry") or {}
    lr = raw.get("line_range")
    return ProcState(
        step_no=step_no,
        tool=raw.get("tool_used") or "",
        stage=as_stage(raw.get("intent_stage")) or "",
        file_path=raw.get("file_path") or "",
        resulting_state=raw.get("resulting_state") or "",
        content_hash=raw.get("content_hash") or "",
        content_description=raw.get("content_description") or "",
        scope_path=raw.get("scope_path") or "",
        function_name=raw.get("function_name") or "",
        class_name=raw.get("class_name") or "",
        line_range=(int(lr[0]), int(lr[1])) if lr else None,
        observation=raw.get("observation") or "",
        args=entry.get("args") or {},
        has_entry=entry.get("kind") == "toolCall",
    )


def _derive(step: Step, step_no: int, repo_relative: bool) -> ProcState:
    category = step.category or ToolCategory.OTHER
    tool = CANONICAL_TOOL.get(category, step.tool_name or "unknown")
    path = normalize_path(_repo_file(step) if repo_relative else _step_file(step))
    args = dict(step.arguments)
    if step.command is not None:
        args["command"] = step.command
    response = step.observation or ""
    return ProcState(
        step_no=step_no,
        tool=tool,
        file_path=path,
        resulting_state=_resulting_state(tool, path, step, response),
        content_hash=_content_hash(tool, step),
        line_range=_line_range(tool, step),
        observation=f"Tool: {tool}\ncommand: {step.command or ''}\nResponse: {response[:500]}",
        args=args,
        has_entry=True,
    )


def _step_file(step: Step) -> str:
    if step.files:
        return step.files[0]
    for key in PATH_KEYS:
        value = step.arguments.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _repo_file(step: Step) -> str:
    """The step's first file by its repository name (an argument path has no directory to
    resolve against, so only its checkout root is dropped)."""
    if step.files:
        return repo_files(step)[0]
    return norm_path(_step_file(step))


def _resulting_state(tool: str, path: str, step: Step, response: str) -> str:
    ok = not step.is_error
    if tool in ("create_file", "replace_string_in_file"):
        ok = ok and not FAILED_EDIT.search(response[:300])
    if tool == "read_file":
        return f"file_read:{path}"
    if tool == "create_file":
        return f"file_created:{path}" if ok else f"file_create_failed:{path}"
    if tool == "replace_string_in_file":
        return f"file_modified:{path}" if ok else f"file_modify_failed:{path}"
    if tool == "run_in_terminal":
        words = (step.command or "").split()
        return f"terminal:{words[0].lower() if words else ''}"
    if tool == "list_dir":
        return f"dir_listed:{path}"
    return f"tool_result:{tool}:{'success' if ok else 'error'}"


def _content_hash(tool: str, step: Step) -> str:
    args = step.arguments
    if tool == "create_file":
        text = str(args.get("content") or args.get("file_text") or "")
    elif tool == "replace_string_in_file":
        old = args.get("oldString") or args.get("old_str") or ""
        new = args.get("newString") or args.get("new_str") or ""
        text = f"{old}||{new}"
    elif tool == "run_in_terminal":
        text = step.command or ""
    else:
        return ""
    return hashlib.md5(text.encode()).hexdigest()[:12] if text else ""


def _line_range(tool: str, step: Step) -> tuple[int, int] | None:
    args = step.arguments
    if tool == "read_file":
        start, end = args.get("startLine"), args.get("endLine")
        view = args.get("view_range")
        if isinstance(view, list) and len(view) == 2:
            start, end = view
        if isinstance(start, int) and isinstance(end, int):
            return (start, end)
        return None
    if tool == "replace_string_in_file":
        old = str(args.get("oldString") or args.get("old_str") or "")
        new = str(args.get("newString") or args.get("new_str") or "")
        return (1, max(old.count("\n") + 1, new.count("\n") + 1))
    if tool == "create_file":
        content = str(args.get("content") or args.get("file_text") or "")
        return (1, content.count("\n") + 1) if content else None
    return None
