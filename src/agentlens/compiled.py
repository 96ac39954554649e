"""The modules an install may compile, as they are, with mypyc (`setup.py`), and which it did.

A compiled module sits beside its source under the same name, and Python imports it first; the
source stays the one place its rules are written, and what runs where nothing was compiled (no C
compiler, or mypy missing at build time). A compiled module older than its source is stale: a
source edit in a tree built in place (`pip install -e .`, `python setup.py build_ext --inplace`)
does not run until it is rebuilt, so `stale()` names them and the test suite fails on them.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

# module -> what it does; the readers' hot path for step-dense formats (mini-swe-agent)
COMPILED = {
    "agentlens.formats.mini_swe_agent": "mini-swe-agent reader",
    "agentlens.formats._fenced_commands": "fenced command blocks",
    "agentlens.formats._openhands_common": "OpenHands/SWE-agent step helpers",
    "agentlens.shell.categories": "shell-command classifier",
    "agentlens.shell.tokens": "shell tokenizer",
    "agentlens.shell.heredocs": "here-documents",
}


def compiled_modules() -> list[str]:
    """The modules of COMPILED that this install runs compiled."""
    return [name for name in COMPILED if _binary(name) is not None]


def stale() -> list[str]:
    """Compiled modules whose source was changed after they were built."""
    found = []
    for name in COMPILED:
        binary = _binary(name)
        if binary is not None and _source(binary, name).stat().st_mtime > _built_at(binary):
            found.append(name)
    return found


def status() -> str:
    """One line: which modules this install runs compiled, or that it runs pure Python."""
    built = [COMPILED[name] for name in compiled_modules()]
    if not built:
        return "pure Python (nothing compiled: install with a C compiler to compile)"
    missing = len(COMPILED) - len(built)
    line = f"compiled: {', '.join(built)}" + (f" ({missing} not built)" if missing else "")
    if old := stale():
        line += f"; STALE (source newer, rebuild): {', '.join(old)}"
    return line


def _binary(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    origin = spec.origin if spec is not None else None
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return Path(origin) if origin and origin.endswith(suffixes) else None


def _built_at(binary: Path) -> float:
    """When a module was last built: its own file, or the one shared library that mypyc puts all
    the modules' code in (`src/<hash>__mypyc.*`) when that is newer. A rebuild in place that
    changes only the code rewrites that library and leaves each module's small loader as it was."""
    shared = Path(__file__).resolve().parents[1].glob("*__mypyc.*")
    return max([binary.stat().st_mtime, *(library.stat().st_mtime for library in shared)])


def _source(binary: Path, name: str) -> Path:
    return binary.with_name(name.rsplit(".", 1)[-1] + ".py")
