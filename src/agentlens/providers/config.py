"""Provider configuration: model strings, named roles, backends and their keys.

Files (later wins): `~/.config/agentlens/config.yaml`, `./agentlens.yaml`, `$AGENTLENS_CONFIG`;
everything lives under the top-level key `llm`. Environment overrides: `AGENTLENS_<ROLE>_MODEL`
(e.g. `AGENTLENS_JUDGE_MODEL=openai:gpt-4.1`), `<BACKEND>_BASE_URL` (e.g. `VLLM_BASE_URL`),
`AGENTLENS_LLM_CACHE`, `AGENTLENS_NO_CACHE=1`.
API keys come from the environment (or `api_key` in a backend entry) and are never logged or stored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from agentlens.errors import ConfigError
from agentlens.providers.config_yaml import read_yaml
from agentlens.providers.pricing import parse_prices

ROLES = ("judge", "user_simulator", "evaluator", "agent")


@dataclass(frozen=True)
class BackendConfig:
    """Where an OpenAI-compatible backend lives and which env var holds its key."""

    base_url: str | None = None
    api_key_env: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float | None = None
    n_ctx: int | None = None
    """`llamacpp` only: context size (default: the model's trained context, from the GGUF)."""
    n_threads: int | None = None
    """`llamacpp` only: CPU threads (default: half the cores, at most 8)."""

    def resolve_key(self) -> str | None:
        if self.api_key:
            return self.api_key
        return os.environ.get(self.api_key_env) if self.api_key_env else None


# Known OpenAI-compatible hosts: `<name>:<model>` works without any config.
KNOWN_BACKENDS: dict[str, BackendConfig] = {
    "openai": BackendConfig("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "deepseek": BackendConfig("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    "openrouter": BackendConfig("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "ollama": BackendConfig("http://127.0.0.1:11434/v1", None),
    "vllm": BackendConfig(None, "VLLM_API_KEY"),
    "openai-compatible": BackendConfig(None, "OPENAI_COMPATIBLE_API_KEY"),
    "anthropic": BackendConfig(None, "ANTHROPIC_API_KEY"),  # SDK backend; base_url optional
}


@dataclass(frozen=True)
class RoleConfig:
    """What model a role uses and its limits."""

    model: str
    max_concurrency: int | None = None
    budget_usd: float | None = None
    budget_tokens: int | None = None
    temperature: float | None = None
    """The role's sampling temperature (the judge's with `--samples N`); None: the caller's."""


@dataclass(frozen=True)
class ProvidersConfig:
    roles: dict[str, RoleConfig] = field(default_factory=dict)
    backends: dict[str, BackendConfig] = field(default_factory=dict)
    cache_path: str | None = None
    ledger_path: str | None = None
    prices: dict[str, Any] = field(default_factory=dict)
    max_concurrency: int = 4
    timeout_s: float = 120.0

    @classmethod
    def load(cls, paths: list[Path] | None = None) -> ProvidersConfig:
        """Merge the config files (`paths` or the default search list) and env overrides."""
        merged: dict[str, Any] = {}
        for path in paths if paths is not None else default_config_paths():
            if path.is_file():
                section = read_llm_section(path)
                try:  # checked file by file, so an error names the file that has it
                    from_mapping(section)
                except ConfigError as exc:
                    raise ConfigError(f"{path}: {exc}") from None
                merge_into(merged, section)
        return from_mapping(merged, apply_env=True)

    def backend(self, name: str) -> BackendConfig | None:
        """User entries override known ones field by field; `<NAME>_BASE_URL` overrides both."""
        known, user = KNOWN_BACKENDS.get(name), self.backends.get(name)
        merged = user or known
        if user is not None and known is not None:
            merged = BackendConfig(
                base_url=user.base_url or known.base_url,
                api_key_env=user.api_key_env or known.api_key_env,
                api_key=user.api_key,
                timeout_s=user.timeout_s or known.timeout_s,
                n_ctx=user.n_ctx,
                n_threads=user.n_threads,
            )
        env_url = os.environ.get(f"{name.upper().replace('-', '_')}_BASE_URL")
        if merged is not None and env_url:
            merged = replace(merged, base_url=env_url)
        return merged

    def role(self, name: str) -> RoleConfig | None:
        return self.roles.get(name)


def default_config_paths() -> list[Path]:
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    paths = [Path(base) / "agentlens" / "config.yaml", Path.cwd() / "agentlens.yaml"]
    if os.environ.get("AGENTLENS_CONFIG"):
        paths.append(Path(os.environ["AGENTLENS_CONFIG"]).expanduser())
    return paths


def read_llm_section(path: Path) -> dict[str, Any]:
    data = read_yaml(path) or {}
    section = data.get("llm", {}) if isinstance(data, dict) else None
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: the `llm` section must be a mapping")
    return section


def merge_into(target: dict[str, Any], source: dict[str, Any]) -> None:
    for key, value in source.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            merge_into(target[key], value)
        else:
            target[key] = value


class _LlmSection(msgspec.Struct, forbid_unknown_fields=True):
    """The keys allowed under `llm:` and their types (roles and backends are checked below)."""

    roles: dict[str, Any] = msgspec.field(default_factory=dict)
    backends: dict[str, Any] = msgspec.field(default_factory=dict)
    cache: str | None = None
    ledger: str | None = None
    prices: dict[str, Any] = msgspec.field(default_factory=dict)
    max_concurrency: int = 4
    timeout_s: float = 120.0


def from_mapping(raw: dict[str, Any], *, apply_env: bool = False) -> ProvidersConfig:
    """Build a config from the `llm` section of a YAML file (already parsed); a wrong key, type
    or value is a one-line `ConfigError` naming where it is."""
    section = _typed(raw, _LlmSection, "llm")
    _at_least(1, section.max_concurrency, "llm.max_concurrency")
    _at_least(1e-9, section.timeout_s, "llm.timeout_s")
    parse_prices(section.prices, "llm.prices")
    roles = {name: parse_role(name, value) for name, value in section.roles.items()}
    if apply_env:
        for name in set(ROLES) | set(roles):
            override = os.environ.get(f"AGENTLENS_{name.upper()}_MODEL")
            if override:
                old = roles.get(name)
                roles[name] = RoleConfig(override) if old is None else _with_model(old, override)
    backends = {}
    for name, value in section.backends.items():
        if not isinstance(value, dict):
            raise ConfigError(f"llm.backends.{name} must be a mapping (base_url, api_key_env)")
        where = f"backends.{name}"
        known = _known_fields(value, BackendConfig, where)
        backends[name] = _typed(known, BackendConfig, f"llm.{where}")
    cache = os.environ.get("AGENTLENS_LLM_CACHE") if apply_env else None
    return ProvidersConfig(
        roles=roles,
        backends=backends,
        cache_path=cache or section.cache,
        ledger_path=section.ledger,
        prices=section.prices,
        max_concurrency=section.max_concurrency,
        timeout_s=section.timeout_s,
    )


def parse_role(name: str, value: Any) -> RoleConfig:
    if isinstance(value, str):
        return RoleConfig(value)
    if isinstance(value, dict) and "model" in value:
        where = f"roles.{name}"
        role = _typed(_known_fields(value, RoleConfig, where), RoleConfig, f"llm.{where}")
        _at_least(1, role.max_concurrency, f"llm.{where}.max_concurrency")
        _at_least(0, role.budget_usd, f"llm.{where}.budget_usd")
        _at_least(0, role.budget_tokens, f"llm.{where}.budget_tokens")
        _at_least(0, role.temperature, f"llm.{where}.temperature")
        return role
    raise ConfigError(f"llm.roles.{name}: give a model string or a mapping with `model`")


T = TypeVar("T")


def _typed(value: dict[str, Any], kind: type[T], where: str) -> T:
    """`value` as `kind`, type-checked (`budget_usd: lots` is an error here, not a crash later);
    `where` is the dotted path of `value`, e.g. `llm.roles.judge`."""
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        problem, _, path = str(exc).partition(" - at `$")
        raise ConfigError(f"{where}{path.rstrip('`')}: {problem}") from None


def _at_least(low: float, value: float | None, where: str) -> None:
    if value is not None and value < low:
        raise ConfigError(f"{where} is {value}; it must be at least {low:g}")


def _known_fields(value: dict[str, Any], kind: type, where: str) -> dict[str, Any]:
    allowed = set(kind.__dataclass_fields__)  # type: ignore[attr-defined]
    unknown = set(value) - allowed
    if unknown:
        keys = "key" if len(unknown) == 1 else "keys"
        raise ConfigError(
            f"llm.{where}: unknown {keys} {', '.join(sorted(unknown))}; "
            f"allowed: {', '.join(sorted(allowed))}"
        )
    return value


def _with_model(role: RoleConfig, model: str) -> RoleConfig:
    return RoleConfig(model, role.max_concurrency, role.budget_usd, role.budget_tokens)
