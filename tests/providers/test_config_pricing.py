"""Model strings, roles, config files with env overrides, and the price table."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentlens.errors import CapabilityError, ConfigError, MissingDependencyError
from agentlens.providers import ChatRequest, TokenUsage, get_provider, make_backend
from agentlens.providers.config import ProvidersConfig
from agentlens.providers.pricing import PriceTable
from agentlens.providers.registry import is_local
from tests.conftest import needed

SHIPPED = Path(__file__).resolve().parents[2] / "src" / "agentlens" / "providers" / "prices.yaml"


def write_config(path: Path, llm: dict[str, object]) -> Path:
    path.write_text(yaml.safe_dump({"llm": llm}))
    return path


def test_roles_come_from_the_config_file_and_env_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(
        tmp_path / "agentlens.yaml",
        {
            "roles": {
                "judge": {"model": "openai:gpt-4.1", "budget_usd": 2.5, "max_concurrency": 7},
                "evaluator": "openai-compatible:http://127.0.0.1:8011/v1#smollm2-135m",
            }
        },
    )
    judge = get_provider("judge")
    assert (judge.name, judge.role, judge.max_concurrency) == ("openai:gpt-4.1", "judge", 7)
    assert judge.budget is not None and judge.budget.max_cost == 2.5
    assert judge.provider.base_url == "https://api.openai.com/v1"  # type: ignore[attr-defined]
    evaluator = get_provider("evaluator")
    assert evaluator.provider.model == "smollm2-135m"  # type: ignore[attr-defined]
    assert evaluator.free and not judge.free

    monkeypatch.setenv("AGENTLENS_JUDGE_MODEL", "deepseek:deepseek-chat")
    overridden = get_provider("judge")
    assert overridden.name == "deepseek:deepseek-chat"
    assert overridden.budget is not None and overridden.budget.max_cost == 2.5


def test_later_config_files_win(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = write_config(
        tmp_path / "user.yaml", {"roles": {"agent": "openai:gpt-4o"}, "timeout_s": 9}
    )
    project = write_config(tmp_path / "proj.yaml", {"roles": {"agent": "ollama:llama3"}})
    config = ProvidersConfig.load([user, project])
    assert config.roles["agent"].model == "ollama:llama3" and config.timeout_s == 9.0


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("gpt-4.1", "is not '<backend>:<model>'"),
        ("nosuch:model", "unknown backend 'nosuch'"),
        ("vllm:qwen", "no base URL"),
        ("judge", "role 'judge' has no model"),
    ],
)
def test_bad_model_strings_name_the_fix(model: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        get_provider(model)


def test_unknown_config_keys_are_rejected(tmp_path: Path) -> None:
    path = write_config(tmp_path / "c.yaml", {"roles": {"judge": {"model": "x:y", "budget": 1}}})
    # it said `unknown keys ['budget']; allowed: ['model', …]`: Python lists in a user's error
    with pytest.raises(ConfigError, match=r"roles.judge: unknown key budget; allowed: [a-z_, ]+$"):
        ProvidersConfig.load([path])


def test_anthropic_has_no_logprobs_and_says_what_to_use_instead() -> None:
    client = get_provider("anthropic:claude-sonnet-4-5", cache=False)
    assert client.supports_logprobs is False
    with pytest.raises(CapabilityError, match=r"returns no log-probs.*llamacpp:"):
        client.option_logprobs_sync([{"role": "user", "content": "?"}], ["A", "B"])


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "anthropic", None)  # simulate the extra not installed
    backend = make_backend("anthropic:claude-haiku-4-5")
    client = get_provider("anthropic:claude-haiku-4-5", cache=False)
    assert backend.name == client.name
    with pytest.raises(MissingDependencyError, match=r"pip install 'agentlens\[anthropic\]'"):
        client.chat_sync(ChatRequest(messages=[{"role": "user", "content": "hi"}]))


def test_costs_follow_the_shipped_table_and_user_overrides(tmp_path: Path) -> None:
    shipped = yaml.safe_load(SHIPPED.read_text())
    usage = TokenUsage(prompt_tokens=1_000, completion_tokens=200, cached_tokens=400)
    gpt = shipped["gpt-4.1"]
    expected = (600 * gpt["prompt"] + 400 * gpt["cached"] + 200 * gpt["completion"]) / 1e6
    table = PriceTable.load()
    assert table.cost("gpt-4.1", usage) == pytest.approx(expected)
    sonnet = shipped["claude-sonnet-4"]
    dated = (600 * sonnet["prompt"] + 400 * sonnet["cached"] + 200 * sonnet["completion"]) / 1e6
    assert table.cost("claude-sonnet-4-20250514", usage) == pytest.approx(dated)  # snapshot
    assert table.cost("openai/gpt-4.1", usage) == pytest.approx(expected)  # router prefix
    assert table.cost("unknown-model", usage) is None
    # never a prefix match: a newer model is "unknown", not charged at an older one's rates
    assert table.lookup("gpt-4.1-2025-04-14") == table.lookup("gpt-4.1")
    for newer in ("gpt-5.5", "gpt-4.1-turbo", "claude-sonnet-4-5", "o3-pro"):
        assert table.lookup(newer) is None, newer
    assert all(price.as_of for price in table.prices.values())  # every shipped price is dated

    user_file = tmp_path / "config" / "agentlens" / "prices.yaml"  # XDG_CONFIG_HOME (conftest)
    user_file.parent.mkdir(parents=True)
    user_file.write_text(yaml.safe_dump({"gpt-4.1": {"prompt": 1.0, "completion": 1.0}}))
    assert PriceTable.load().cost("gpt-4.1", usage) == pytest.approx(1_200 / 1e6)
    with pytest.raises(ConfigError, match="needs numeric prompt and completion"):
        PriceTable.load({"bad": {"prompt": "cheap"}})


@pytest.mark.parametrize(
    ("model", "local"),
    [
        ("llamacpp:/m.gguf", True),
        ("ollama:llama3", True),
        ("openai-compatible:http://127.0.0.1:8011/v1#m", True),
        ("openai-compatible:http://localhost:8011/v1#m", True),
        ("openai-compatible:http://localhost.:8011/v1#m", True),
        ("openai-compatible:http://[::1]:8011/v1#m", True),
        ("openai-compatible:http://[::ffff:127.0.0.1]:8011/v1#m", True),
        ("openai-compatible:http://[::ffff:10.0.0.1]:8011/v1#m", False),
        ("openai-compatible:http://localhost.example.com/v1#m", False),
        ("openai-compatible:https://example.com/v1#m", False),
        ("openai:gpt-4.1", False),
    ],
)
def test_local_models_are_free(model: str, local: bool) -> None:
    assert is_local(model) is local


def test_hosted_backends_without_a_key_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    client = get_provider("deepseek:deepseek-chat", cache=False)
    with pytest.raises(ConfigError, match="no API key; set DEEPSEEK_API_KEY"):
        client.chat_sync(ChatRequest(messages=[{"role": "user", "content": "hi"}]))


def test_a_missing_gguf_file_is_a_config_error(tmp_path: Path) -> None:
    needed("llama_cpp", "pip install 'agentlens[local-llm]'")
    client = get_provider(f"llamacpp:{tmp_path / 'absent.gguf'}", cache=False)
    with pytest.raises(ConfigError, match=r"absent.gguf: GGUF model file not found"):
        client.option_logprobs_sync([{"role": "user", "content": "?"}], ["A"])


def test_broken_yaml_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "agentlens.yaml"
    path.write_text("llm:\n  roles: [judge\n")
    with pytest.raises(ConfigError, match=r"agentlens.yaml:3: not valid YAML \(expected") as info:
        ProvidersConfig.load([path])
    assert "\n" not in str(info.value)


WRONG_SECTIONS = {
    "model is a number": (
        {"roles": {"judge": {"model": 5}}},
        r"llm.roles.judge.model: Expected `str`",
    ),
    "budget is a word": (
        {"roles": {"judge": {"model": "openai:gpt-4.1", "budget_usd": "lots"}}},
        r"llm.roles.judge.budget_usd: Expected `float \| null`",
    ),
    "negative concurrency": (
        {"roles": {"judge": {"model": "openai:x", "max_concurrency": -3}}},
        r"llm.roles.judge.max_concurrency is -3; it must be at least 1",
    ),
    "misspelt section key": ({"role": {"judge": "openai:x"}}, r"unknown field `role`"),
    "cache is a number": ({"cache": 5}, r"llm.cache: Expected `str \| null`"),
    "zero concurrency": ({"max_concurrency": 0}, r"llm.max_concurrency is 0"),
    "backend url is a number": ({"backends": {"x": {"base_url": 5}}}, r"llm.backends.x.base_url"),
    "price is a word": ({"prices": {"m": {"prompt": "abc"}}}, r"llm.prices: price of 'm'"),
}


@pytest.mark.parametrize("case", sorted(WRONG_SECTIONS))
def test_a_wrong_value_names_the_file_and_key(case: str, tmp_path: Path) -> None:
    """Checked when the files are loaded, file by file: not a crash at the first call."""
    llm, message = WRONG_SECTIONS[case]
    good = write_config(tmp_path / "good.yaml", {"roles": {"judge": "openai:gpt-4.1"}})
    bad = write_config(tmp_path / "bad.yaml", llm)
    with pytest.raises(ConfigError, match=message) as info:
        ProvidersConfig.load([good, bad])
    assert str(info.value).startswith(f"{bad}: ") and "\n" not in str(info.value)
