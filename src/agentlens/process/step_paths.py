"""What both labelers read of a step: is it a shell call, and which file(s) it targets,
normalised as the release normalises paths."""

from __future__ import annotations

from agentlens.trajectory import Step, ToolCategory

PATH_ARGUMENTS = ("filePath", "file_path", "path", "filename", "file")


def is_shell(step: Step) -> bool:
    """A terminal call: readers keep the shell line in `command` even when `cat f` is a read."""
    return step.category is ToolCategory.RUN_COMMAND or bool(step.command)


def step_path(step: Step) -> str:
    """The step's target file(s), normalised as the release does, comma-joined when several."""
    paths = step.files or [_argument_path(step)]
    return ",".join(normalize_path(p) for p in paths if p)


def _argument_path(step: Step) -> str:
    for key in PATH_ARGUMENTS:
        value = step.arguments.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def normalize_path(path: str) -> str:
    """Release path normalisation (spec §2.3): drop `/`, `testbed/`, `workspace(s)/`, `home/`,
    `tmp/`; lowercase."""
    text = path.strip().lstrip("/")
    text = text.removeprefix("testbed/")
    text = text.lstrip("/\\")
    for prefix in ("workspace/", "workspaces/", "home/", "tmp/"):
        if text.lower().startswith(prefix):
            text = text[len(prefix) :]
    return text.lower().replace("\\", "/")
