"""The one way scenario code sends a chat request to a model: with every message's content
masked (`agentlens.redaction`), unless `--no-redact` / `AGENTLENS_NO_REDACT=1`.

The simulated user's and the built-in agent's prompts carry what the agent's tools read and
printed (file contents, command output, MCP results), so secrets in the workspace would
otherwise reach the provider; the saved session and `--dump-prompts` are masked the same way.
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

from agentlens.providers.client import LLMClient
from agentlens.providers.types import ChatRequest, ChatResponse, Message
from agentlens.redaction import enabled, redact_text, redact_value

# A conversation resends its history on every call: each text is scanned once.
_redact_cached = lru_cache(maxsize=512)(redact_text)


async def send(client: LLMClient, request: ChatRequest) -> ChatResponse:
    return await client.chat(msgspec.structs.replace(request, messages=redacted(request.messages)))


def redacted(messages: list[Message]) -> list[Message]:
    """`messages` with secrets masked in their contents; as given when redaction is off."""
    if not enabled():
        return messages
    return [{**m, "content": _masked(m.get("content"))} for m in messages]


def _masked(content: object) -> object:
    return _redact_cached(content) if isinstance(content, str) else redact_value(content)
