"""The equivalence cascade, rule by rule (spec §4.2), and the vectorised terminal verdicts checked
pair by pair against the full cascade on real runs."""

from __future__ import annotations

import pytest

from agentlens.process.equivalence import (
    Equivalence,
    classify_terminal,
    description_symbols,
    line_overlap,
    normalize_terminal,
    word_jaccard,
)
from agentlens.process.match import MatchLists
from agentlens.process.profiles import get_profile
from agentlens.process.pta import run_labels
from agentlens.process.states import ProcState, states_from_trajectory
from agentlens.process.terminal_index import TerminalIndex, is_terminal
from tests.process.test_pta import TASK, bench_reference, bench_split

EQ = Equivalence()


def term(cmd: str, stage: str = "E", obs: str | None = None) -> ProcState:
    return ProcState(
        step_no=1,
        tool="run_in_terminal",
        stage=stage,
        resulting_state=f"terminal:{cmd.split()[0].lower()}",
        content_hash=str(hash(cmd)),
        observation=obs if obs is not None else f"command: {cmd}",
        args={"command": cmd},
        has_entry=True,
    )


def edit(
    path: str, lines: tuple[int, int], digest: str, tool: str = "replace_string_in_file"
) -> ProcState:
    return ProcState(
        step_no=1,
        tool=tool,
        stage="I",
        file_path=path,
        resulting_state=f"file_modified:{path}",
        content_hash=digest,
        line_range=lines,
        observation=f"edit {digest}",
        args={"filePath": "/" + path},
        has_entry=True,
    )


def test_position_zero_always_matches_and_stage_mismatch_never() -> None:
    assert EQ.check(term("ls"), term("grep x y"), 0)
    assert not EQ.check(term("ls", "E"), term("ls", "V"), 3)


def test_same_content_hash_matches_and_different_tools_do_not() -> None:
    a = term("ls -la")
    b = term("ls -la", obs="other output")
    assert EQ.check(a, b, 2)
    read = ProcState(step_no=1, tool="read_file", stage="E", file_path="a.py", has_entry=True)
    assert not EQ.check(a, read, 2)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("grep -rn 'def foo' src", "grep -n 'def foo' lib", True),  # same quoted target
        ("grep -rn 'foo bar baz' .", "rg 'foo bar qux'", True),  # Jaccard 2/4 = 0.5
        ("grep -rn 'alpha beta' .", "grep 'gamma delta' .", True),  # same first token (sdk rule)
        ("cat a/models.py", "head -n 5 a/models.py", True),  # view group, same target
        ("python repro.py", "python3 repro.py", True),  # normalised equal
        ("ls src", "pip install -e .", False),
    ],
)
def test_terminal_similarity(a: str, b: str, expected: bool) -> None:
    assert EQ.check(term(a), term(b), 4) is expected
    assert EQ.cascade(term(a), term(b)) is expected


def test_base_command_rule_is_kept_by_both_profiles_and_can_be_dropped() -> None:
    """Spec decision 9: keep the permissive "same first token" rule for parity (both profiles)."""
    from agentlens.process.profiles import get_profile

    assert get_profile("paper").base_command_rule and get_profile("sdk-compat").base_command_rule
    strict = Equivalence(base_command_rule=False)
    a, b = term("grep -rn 'alpha beta' ."), term("grep 'gamma delta' .")
    assert EQ.check(a, b, 4) and not strict.check(a, b, 4)


def test_edits_to_one_file_overlap_on_their_synthetic_ranges() -> None:
    assert line_overlap((1, 4), (1, 10)) == pytest.approx(0.4)
    assert EQ.check(edit("m.py", (1, 4), "aa"), edit("m.py", (1, 10), "bb"), 3)  # 0.4 ≥ 0.3
    assert not EQ.check(edit("m.py", (1, 4), "aa"), edit("n.py", (1, 4), "bb"), 3)  # other file


def test_cross_tool_edit_on_the_same_file_is_equivalent() -> None:
    created = edit("m.py", (1, 40), "aa", tool="create_file")
    created.resulting_state = "file_created:m.py"
    assert EQ.check(created, edit("m.py", (1, 3), "bb"), 5)
    assert not EQ.check(created, edit("other.py", (1, 3), "bb"), 5)


def test_scope_symbols_decide_edits_on_one_file() -> None:
    a, b = edit("m.py", (1, 3), "aa"), edit("m.py", (1, 3), "bb")
    a.content_description, b.content_description = (
        "modified function 'prepare'",
        "added function 'send'",
    )
    assert description_symbols(a.content_description) == {"prepare"}
    assert not EQ.check(a, b, 2)
    b.content_description = "functions: prepare, send"
    assert EQ.check(a, b, 2)


def test_helpers() -> None:
    assert normalize_terminal("cd /testbed && python3  x.py") == "python x.py"
    assert classify_terminal("find . | grep foo") == ("search", ".")  # first non-flag token
    assert classify_terminal("sed -n '1,20p' requests/models.py") == ("view", "requests/models.py")
    assert word_jaccard("a b c", "b c d") == 0.5


def test_vectorised_terminal_verdicts_equal_the_cascade_on_real_runs() -> None:
    ref = bench_reference(TASK)
    config = get_profile("sdk-compat")
    index = TerminalIndex(list(ref.nodes.values()), EQ)
    pairs = 0
    for traj in bench_split(TASK).scored[:12]:
        cand = states_from_trajectory(traj, run_labels(traj, config), use_raw=True)
        fast = index.match(cand)
        for node in index.nodes:
            slow = [j for j, c in enumerate(cand) if is_terminal(c) and EQ.cascade(node, c)]
            assert fast[id(node)] == slow
            pairs += len(cand)
        lists = MatchLists(cand, EQ, index)
        for node in ref.nodes.values():
            if not node.is_initial:
                slow = [j for j, c in enumerate(cand) if EQ.cascade(node, c)]
                assert lists(node) == slow
                assert [j for j, c in enumerate(cand) if EQ.check(node, c, 1)] == slow
    assert pairs > 5000
