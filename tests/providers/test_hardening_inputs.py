"""Hostile `agentlens.yaml` files, read the way a command reads them (`review --judge ROLE` looks
the role up in the config): each is one line naming the file, exit 2, and nothing in it runs."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from agentlens.cli import main
from agentlens.providers.config import ProvidersConfig
from agentlens.providers.openai_wire import error_text
from agentlens.scenarios.mcp_client import one_line
from tests.conftest import BENCH
from tests.secret_at_cut import KEY, kept_part_of_key, real_text

RUN = (
    BENCH
    / "trajectories"
    / "psf__requests-1724"
    / "psf__requests-1724-logs-gpt-4o-fail-25018754982_pta.json"
)
LAUGHS = "".join(
    f"    {b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n"
    for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)
CASES: dict[str, tuple[bytes, str]] = {
    "not-utf8": (b"llm:\n  roles: {judge: caf\xe9}\n", "not UTF-8 text (byte 0xe9 at offset 25)"),
    "duplicate-role": (
        b"llm:\n  roles:\n    judge: openai:gpt-4.1\n    judge: deepseek:deepseek-chat\n",
        ":4: not valid YAML (key 'judge' given twice)",
    ),
    "billion-laughs": (
        (
            "llm:\n  prices:\n    a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + LAUGHS
        ).encode(),
        "its aliases expand to more than 1,000,000 values (a YAML bomb?)",
    ),
    "deep": (b"llm:\n  roles: " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_config_is_one_line_naming_it(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, what = CASES[case]
    config = tmp_path / "agentlens.yaml"
    config.write_bytes(data)
    monkeypatch.setenv("AGENTLENS_CONFIG", str(config))
    code = main(["review", str(RUN), "--judge", "judge"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {config}") and what in err, err


def test_a_python_tag_is_refused_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    config = tmp_path / "agentlens.yaml"
    config.write_text(
        f'llm:\n  cache: !!python/object/apply:os.system ["touch {marker}"]\n', encoding="utf-8"
    )
    with pytest.raises(Exception, match="could not determine a constructor"):
        ProvidersConfig.load([config])
    assert not marker.exists()


def test_anchors_in_a_real_config_still_work(tmp_path: Path) -> None:
    config = tmp_path / "agentlens.yaml"
    config.write_bytes(
        b"\xef\xbb\xbfllm:\r\n  roles:\r\n    judge: &m {model: openai:gpt-4.1, budget_usd: 5.0}\r\n"
        b"    evaluator: *m\r\n"
    )
    loaded = ProvidersConfig.load([config])
    assert loaded.roles["evaluator"] == loaded.roles["judge"]


def test_an_error_text_cut_to_300_characters_keeps_a_mark_whole() -> None:
    """A server's error text is masked, then cut to 300 characters: the cut fell inside the mark
    a quoted key became (`[REDACTED:open`)."""
    said = f"{one_line(real_text(2000), 2000)[:285]} {KEY} more"  # the mark spans the cut
    response = httpx.Response(400, json={"error": {"message": said}})
    text = error_text(response)
    assert text.endswith(" [REDACTED:openai-key]") and kept_part_of_key(text) == []
