"""Python scripts a run writes with a heredoc and runs later, for the `paper` labeler: a bash-only
agent often fixes a file with `cat > fix.py <<EOF … open('pkg/core.py', 'w') … EOF`, then
`python fix.py`. The run of the script is the write (labeling-guideline.md: "python that writes
a file"); writing the script itself is not, and neither is a file next to the script (its own
scratch input or output). Text is only pattern-matched, never executed."""

from __future__ import annotations

import re

from agentlens.shell.actions import python_writes
from agentlens.shell.heredocs import MARKER, cut_heredocs

# a heredoc header that redirects into a .py file: `cat > fix.py <<EOF`, `cat <<'EOF' > fix.py`
SCRIPT_TARGET = re.compile(r"\b(?:cat|tee)\b[^\n]*?>\s*['\"]?([^\s'\"<>;&|]+\.py)\b")
RUN_SCRIPT = re.compile(r"\bpython[\d.]*\s+(?:-\S+\s+)*['\"]?([^\s'\";&|]+\.py)\b")


def script_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def written_scripts(command: str) -> dict[str, tuple[str, ...]]:
    """{script file name: files its code opens for writing}, for .py files written by a heredoc."""
    if "<<" not in command:
        return {}
    head, bodies = cut_heredocs(command)
    found: dict[str, tuple[str, ...]] = {}
    for line in head.split("\n"):
        target, marker = SCRIPT_TARGET.search(line), MARKER.search(line)
        if target and marker and int(marker[1]) < len(bodies):
            writes = python_writes(bodies[int(marker[1])])
            # files next to the script are its own scratch input or output, not the project
            here = _folder(target[1])
            found[script_name(target[1])] = tuple(w for w in writes if _folder(w) != here)
    return found


def _folder(path: str) -> str:
    path = path.removeprefix("./")
    return path.rsplit("/", 1)[0] if "/" in path else ""


def scripts_run(command: str) -> list[str]:
    """File names of the .py scripts `command` runs with python."""
    return [script_name(m[1]) for m in RUN_SCRIPT.finditer(command)]
