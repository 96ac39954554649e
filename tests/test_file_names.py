"""`file_stem` and `FileStems`: trace text as a file name, for `convert` and `--dump-prompts`."""

from __future__ import annotations

import pytest

from agentlens.file_names import MAX_STEM, FileStems, file_stem


@pytest.mark.parametrize(
    ("text", "stem"),
    [
        ("..", "trajectory"),
        (".", "trajectory"),
        ("../../etc/cron.d/x", "etc_cron.d_x"),
        ("run 1/2: <b>ok</b>", "run_1_2_b_ok_b"),
        (".hidden", "hidden"),
        ("会话", "trajectory"),
    ],
)
def test_a_stem_is_one_plain_visible_name(text: str, stem: str) -> None:
    assert file_stem(text, "trajectory") == stem


def test_a_long_text_is_cut_and_keeps_a_digest_of_the_whole() -> None:
    first, second = file_stem("x" * 500 + "1", "t"), file_stem("x" * 500 + "2", "t")
    assert len(first) == len(second) == MAX_STEM
    assert first != second


def test_a_repeat_never_takes_a_name_a_text_of_its_own_took() -> None:
    """Ids `a`, `a-2`, `a` were named `a`, `a-2`, `a-2`: the third file overwrote the second
    under `convert --force`."""
    stems = FileStems("trajectory")
    assert [stems.add(text) for text in ["a", "a-2", "a", "a"]] == ["a", "a-2", "a-3", "a-4"]
    assert stems.count == 4
