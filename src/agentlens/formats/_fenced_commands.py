"""The fenced command blocks of a mini-swe-agent reply (v1 ```` ```bash ````, v2
```` ```mswea_bash_command ````), found exactly as the agent's own regex finds them, in linear time."""

from __future__ import annotations

import re

# The opening of a block as the agent's action regexes see it; the closing fence is found with
# `str.find` instead of the regex's lazy `(.*?)\n```` (see `command_blocks` for why they agree).
FENCE_OPEN = re.compile(r"```(?:bash|mswea_bash_command)(\s*)")


def command_blocks(text: str) -> list[tuple[int, str]]:
    """(start, command) of each command block, as mini-swe-agent's regex
    ```` ```(?:bash|mswea_bash_command)\\s*\\n(.*?)\\n``` ```` (DOTALL) finds them.

    After an opening, the command runs from the line after the opening's last newline to the
    next line that starts with ```: the lazy `(.*?)` stops at the first `\\n```` it can. Only
    when that finds none may the regex back off to an earlier newline of the opening's
    whitespace, which helps only when the line after the last newline is itself the ``` fence
    (an empty command). Where no `\\n```` follows at all, no later opening can close either.
    """
    found: list[tuple[int, str]] = []
    position = 0
    while (opening := FENCE_OPEN.search(text, position)) is not None:
        space, end = opening.span(1)
        last_newline = text.rfind("\n", space, end)
        if last_newline < 0:
            position = opening.start() + 1
            continue
        close = text.find("\n```", last_newline + 1)
        if close >= 0:
            found.append((opening.start(), text[last_newline + 1 : close]))
            position = close + 4
            continue
        newline = text.rfind("\n", space, last_newline)
        if newline < 0 or not text.startswith("```", last_newline + 1):
            return found
        found.append((opening.start(), text[newline + 1 : last_newline]))
        position = last_newline + 4
    return found
