"""A released fold (`workflows.json`) and persona files as a careless or hostile user writes them:
each problem is one line naming the file, never a crash and never a silent default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlens.errors import ConfigError
from agentlens.scenarios import load_fold
from agentlens.scenarios.personas import load_persona
from tests.scenarios.test_fold_and_cli import released_fold


def rewrite(path: Path, **changes: object) -> None:
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, **changes}))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"budget_dollars_limit": "abc"},
            "budget_dollars_limit must be a number or null, not 'abc'",
        ),
        ({"budget_dollars_limit": -1}, "budget_dollars_limit must be at least 0, not -1"),
        ({"num_attempts": -3}, "num_attempts must be a whole number of at least 1, not -3"),
        ({"num_attempts": True}, "num_attempts must be a whole number of at least 1, not True"),
        ({"num_attempt": 2}, "unknown fold key 'num_attempt' (did you mean 'num_attempts'?)"),
        ({"user_paths": "users/toxic.txt"}, "user_paths must be a list of persona files or names"),
    ],
)
def test_a_bad_fold_value_is_one_line_naming_the_file(
    calc_project: Path, tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    path = released_fold(tmp_path, calc_project)
    rewrite(path, **changes)
    with pytest.raises(ConfigError) as info:
        load_fold(path)
    assert str(info.value) == f"{path}: {message}"


def test_a_number_too_large_for_a_float_is_refused(calc_project: Path, tmp_path: Path) -> None:
    path = released_fold(tmp_path, calc_project)
    path.write_text(path.read_text().replace('"num_attempts": 2', '"num_attempts": 1e400'))
    with pytest.raises(ConfigError) as info:
        load_fold(path)
    assert str(info.value) == (
        f"{path}: num_attempts must be a whole number of at least 1, not inf"
    )


def test_a_fold_key_given_twice_is_refused(calc_project: Path, tmp_path: Path) -> None:
    path = released_fold(tmp_path, calc_project)
    text = path.read_text()
    path.write_text(text.replace('"num_attempts": 2', '"num_attempts": 2, "num_attempts": 9'))
    with pytest.raises(ConfigError, match=r"key 'num_attempts' given twice"):
        load_fold(path)


def test_a_fold_with_a_bom_and_whole_floats_still_loads(calc_project: Path, tmp_path: Path) -> None:
    path = released_fold(tmp_path, calc_project)
    rewrite(path, num_attempts=2.0, budget_dollars_limit=None)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    fold = load_fold(path)
    assert (fold.attempts, fold.budget_dollars) == (2, None)


def test_a_persona_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    persona = tmp_path / "grumpy.txt"
    persona.write_bytes(b"Tu es tr\xe8s impatient.\n")
    with pytest.raises(ConfigError) as info:
        load_persona(str(persona))
    assert str(info.value) == f"{persona}: persona file is not UTF-8 text (offset 8)"
