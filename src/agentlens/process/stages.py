"""Intent stages: the four letters every labeler returns and the released data's words for them."""

from __future__ import annotations

from typing import Literal, get_args

Stage = Literal["E", "I", "V", "O"]
STAGES: tuple[Stage, ...] = get_args(Stage)

STAGE_NAMES: dict[Stage, str] = {
    "E": "exploration",
    "I": "implementation",
    "V": "verification",
    "O": "orchestration",
}
STAGE_BY_NAME: dict[str, Stage] = {name: letter for letter, name in STAGE_NAMES.items()}


def as_stage(value: str | None) -> Stage | None:
    """Accept a letter (`"E"`) or a released word (`"exploration"`); anything else is None."""
    if not value:
        return None
    for letter in STAGES:
        if value == letter:
            return letter
    return STAGE_BY_NAME.get(value.lower())
