"""Model string -> backend instance. Backends are imported only when chosen.

openai:gpt-4.1                                  (also deepseek:, openrouter:, ollama:, vllm:)
anthropic:claude-sonnet-4-5
openai-compatible:http://127.0.0.1:8011/v1#smollm2-135m
llamacpp:/path/model.gguf
<backend named in llm.backends>:<model>
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlparse

from agentlens.errors import ConfigError
from agentlens.providers.config import KNOWN_BACKENDS, BackendConfig, ProvidersConfig
from agentlens.seams import Provider

LOCAL_BACKENDS = ("llamacpp", "ollama")
HOSTED_BACKENDS = ("openai", "deepseek", "openrouter")  # these refuse calls without a key


def split_model_string(model: str) -> tuple[str, str]:
    backend, sep, rest = model.partition(":")
    if not sep or not rest:
        raise ConfigError(
            f"model {model!r} is not '<backend>:<model>' (e.g. openai:gpt-4.1, "
            "anthropic:claude-sonnet-4-5, openai-compatible:http://host:port/v1#model, "
            "llamacpp:/path/model.gguf) nor a configured role"
        )
    return backend, rest


def make_backend(model: str, config: ProvidersConfig | None = None) -> Provider:
    """Build the backend for a model string (no cache, no retries: see `get_provider`)."""
    config = config or ProvidersConfig()
    backend, rest = split_model_string(model)
    if backend == "anthropic":
        from agentlens.providers.anthropic import AnthropicProvider

        cfg = config.backend("anthropic") or BackendConfig()
        return AnthropicProvider(
            rest,
            api_key=cfg.resolve_key(),
            base_url=cfg.base_url,
            timeout_s=cfg.timeout_s or config.timeout_s,
        )
    if backend == "llamacpp":
        from agentlens.providers.llamacpp import LlamaCppProvider

        cfg = config.backend("llamacpp") or BackendConfig()
        return LlamaCppProvider(rest, n_ctx=cfg.n_ctx, n_threads=cfg.n_threads)
    return _openai_compatible(model, backend, rest, config)


def _openai_compatible(model: str, backend: str, rest: str, config: ProvidersConfig) -> Provider:
    from agentlens.providers.openai_compatible import OpenAICompatibleProvider

    cfg = config.backend(backend)
    if cfg is None:
        known = sorted({*KNOWN_BACKENDS, *config.backends, "anthropic", "llamacpp"})
        raise ConfigError(f"unknown backend {backend!r} in {model!r}; known: {', '.join(known)}")
    base_url, model_name = cfg.base_url, rest
    if "#" in rest:
        base_url, model_name = rest.rsplit("#", 1)
    if not base_url:
        raise ConfigError(
            f"{model!r}: no base URL; write {backend}:http://host:port/v1#model "
            f"or set llm.backends.{backend}.base_url"
        )
    return OpenAICompatibleProvider(
        model,
        base_url=base_url,
        model=model_name,
        api_key=cfg.resolve_key(),
        key_env=cfg.api_key_env,
        key_required=backend in HOSTED_BACKENDS,
        timeout_s=cfg.timeout_s or config.timeout_s,
    )


def is_local(model: str) -> bool:
    """True for in-process models and servers on loopback: they cost nothing."""
    backend, _, rest = model.partition(":")
    if backend in LOCAL_BACKENDS:
        return True
    host = urlparse(rest.split("#", 1)[0]).hostname if "//" in rest else None
    if host is None:
        return False
    if host in ("localhost", "localhost."):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    # ::ffff:127.0.0.1 is loopback, though Python before 3.13 says it is not
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)
