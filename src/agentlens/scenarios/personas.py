"""Personas of the simulated user (spec §4.1). The three built-in texts are our own wording of
the released personas; any other persona is a text file given by path. The released fold runs
`default` and `toxic`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentlens.bounded_read import read_named
from agentlens.errors import ConfigError

BUILT_IN = {
    "default": (
        "You are relaxed. Let the agent work things out on its own and do not help it much. "
        "Step in only when there is a clear sign that it has gone wrong."
    ),
    "helpful": (
        "You help the agent when things go wrong: briefly suggest another approach or point at "
        "the mistake, in a neutral and objective tone."
    ),
    "toxic": (
        "You are a little toxic. From time to time you needle the agent, sound frustrated and "
        "are sometimes impolite, but you never mislead it: the task must still get solved."
    ),
}
RELEASED_FOLD = ("default", "toxic")


@dataclass(frozen=True)
class Persona:
    name: str
    text: str


def load_persona(spec: str) -> Persona:
    """A built-in persona by name, or a text file (its stem names it)."""
    if spec in BUILT_IN:
        return Persona(spec, BUILT_IN[spec])
    path = Path(spec)
    if not path.is_file():
        known = ", ".join(BUILT_IN)
        raise ConfigError(f"persona {spec!r} is neither built in ({known}) nor a file")
    try:
        text = read_named(path).decode("utf-8-sig").strip()
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: persona file is not UTF-8 text (offset {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read persona file: {exc.strerror or exc}") from None
    if not text:
        raise ConfigError(f"{path}: persona file is empty")
    return Persona(path.stem, text)
