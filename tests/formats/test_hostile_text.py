"""Hostile text and nesting: the shell classifier and every reader finish on adversarial input.

Texts aimed at the regexes (`shell.tokens` TOKEN / PLAIN_TOKEN / QUOTED / HEREDOC, mini-swe-agent FENCE and
RETURNCODE, swe-agent ACI_WORDS, Codex EXIT_CODE, the apply_patch file pattern): backslash runs,
unbalanced quotes, `<<` without terminators, unclosed ``` fences, 100k-character lines. Each is
1 MB, put into the text fields of a real sample. JSON nested 1000 deep (just under orjson's
limit) goes into every position near the top of a sample.

`hang_guard` is a hang guard, not a performance target: 10 s for 1 MB catches catastrophic
backtracking (minutes to forever) while staying far from the ~0.1-0.7 s these take today. Speed
is measured in `benchmarks/`, never here.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import pytest

from agentlens.errors import AgentLensError
from agentlens.formats._categories import categorize_tool
from agentlens.formats._steps import classify
from agentlens.shell.categories import analyse_command, files_in_command
from tests.formats import _mutate
from tests.formats._known_bugs import CLAUDE, CODEX_EXEC, DEEP_BUGS, MINI_SWEBV
from tests.formats.test_fuzz_readers import SAMPLES, Sample, load_sample

MB = 1 << 20
GUARD_SECONDS = 10
# the string fields that reach a regex in some reader (commands, messages, outputs, patches)
TEXT_KEYS = {
    "action",
    "arguments",
    "cmd",
    "code",
    "command",
    "content",
    "input",
    "keystrokes",
    "message",
    "observation",
    "output",
    "patch",
    "response",
    "response_preview",
    "summary",
    "text",
    "thought",
}
UNITS = {
    "backslashes": "\\",
    "escaped-quotes": "\\'\\\"",
    "unbalanced-single": "echo 'a b ",
    "unbalanced-double": 'echo "a \\" b ',
    "quote-soup": "'\"`$(",
    "heredocs-unterminated": "cat <<EOF\n",
    "heredoc-operators": "<<",
    "heredocs-dash-quoted": "<<-'E' x\n",
    "fences-unclosed": "```bash\n",
    "fence-then-lines": "```bash\nx\n" + "y\n" * 64,
    "operators": ";&|>(",
    "returncode-open": "<returncode> ",
    "exit-code-no-digits": "exit code ",
    "patch-headers": "*** Update File: ",
    "line-continuations": "\\\n",
    "one-word": "a",
    "many-words": "a ",
}
# by hand: AGENTLENS_HOSTILE_ALL=1 runs every unit on every reader (the default, the first six)
READER_UNITS = list(UNITS) if os.environ.get("AGENTLENS_HOSTILE_ALL") else list(UNITS)[:6]


def _repeat(unit: str, size: int = MB) -> str:
    return (unit * (size // len(unit) + 1))[:size]


@contextmanager
def hang_guard(seconds: float = GUARD_SECONDS) -> Iterator[None]:
    """Fail with TimeoutError if the block runs longer than `seconds` (SIGALRM interrupts the
    regex engine too, so a runaway match is stopped, not waited out)."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("unit", list(UNITS))
def test_classifier_finishes_on_1mb(unit: str) -> None:
    text = _repeat(UNITS[unit])
    with hang_guard():
        category, files = analyse_command(text)
        assert files == files_in_command(text)
        classify("bash", {"command": text})
        classify("str_replace_editor", {"command": text, "path": text})
        classify("apply_patch", {"input": text})
        categorize_tool("bash", {"command": text})
    assert category is not None


def test_classifier_finishes_on_100k_lines() -> None:
    for unit in ("grep -r foo ", "a|", "x=1 ", "'", '"', "$(", "> f "):
        with hang_guard():
            analyse_command(_repeat(unit, 100_000))


def test_classifier_finishes_on_a_heredoc_word_repeated_in_one_line() -> None:
    """Found while fuzzing the classifier: each `A` of the one-line body after `<<A` rescanned
    the line for the closing one (0.9 s at 160 kB, 130 s at 320 kB)."""
    with hang_guard():
        analyse_command("cat <<A\n" + _repeat("A x "))


def test_codex_exec_finishes_on_many_turns() -> None:
    """Found by review during the atheris campaign: each `turn.completed` looked for its turn's
    first step from the start of the trace (quadratic: 8.5 s for 20k turns, 40 s for 40k)."""
    sample = load_sample(CODEX_EXEC)
    first, *rest = sample.path.read_bytes().splitlines(keepends=True)  # thread.started, a turn
    turn = [line for line in rest if b'"turn.' in line or b'"agent_message"' in line]
    with hang_guard():  # ~20 s before the fix
        _read_or_reject(sample, first + b"".join(turn) * 30_000, lenient=False)


@pytest.mark.parametrize("name", [MINI_SWEBV, CLAUDE])
def test_a_record_of_many_calls_is_saved_once(name: str) -> None:
    """Found by the atheris campaign (mini-swe-agent; Claude Code by review): every call of a
    message carried the whole message as `raw`, so N calls saved N copies of it (quadratic: a
    430 KiB file of 4000 calls gave 1.5 GiB of JSON). Now only the first call carries it."""
    sample, data = _many_calls(name, 2000)
    trajectories = list(sample.reader().read(sample.path, data))  # type: ignore[call-arg]
    assert sum(len(t.steps) for t in trajectories) > 2000
    assert len(msgspec.json.encode(trajectories)) < 20 * len(data)


def _many_calls(name: str, calls: int) -> tuple[Sample, bytes]:
    """The sample with one assistant record making `calls` calls (mini-swe-agent
    `extra.actions`, Claude Code `tool_use` blocks)."""
    sample = load_sample(name)
    if name == MINI_SWEBV:
        position: tuple[Any, ...] = ("messages", 2)
        message = sample.parsed.value["messages"][2]
        actions = [{"command": f"ls {i}"} for i in range(calls)]
        record = {**message, "extra": {**message["extra"], "actions": actions}}
    else:
        at = next(i for i, line in enumerate(sample.parsed.value) if _tool_use(line) is not None)
        position, line = (at,), sample.parsed.value[at]
        block = _tool_use(line) or {}
        blocks = [{**block, "id": f"toolu_{i}"} for i in range(calls)]
        record = {**line, "message": {**line["message"], "content": blocks}}
    value, _ = _mutate.edit(sample.parsed.value, position, "replace", record)
    return sample, _mutate.serialise(sample.parsed, value)


def _tool_use(line: Any) -> dict[str, Any] | None:
    content = line.get("message", {}).get("content") if isinstance(line, dict) else None
    blocks = content if isinstance(content, list) else []
    return next((b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"), None)


@pytest.mark.parametrize("unit", READER_UNITS)
@pytest.mark.parametrize("name", SAMPLES)
def test_reader_finishes_on_hostile_text(name: str, unit: str) -> None:
    sample = load_sample(name)
    data = _with_text(sample.parsed, _repeat(UNITS[unit]))
    with hang_guard():
        _read_or_reject(sample, data, lenient=True)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            n, marks=pytest.mark.xfail(strict=True, raises=DEEP_BUGS[n][0], reason=DEEP_BUGS[n][1])
        )
        if n in DEEP_BUGS
        else n
        for n in SAMPLES
    ],
)
def test_reader_survives_deep_nesting(name: str) -> None:
    """1000-deep arrays and objects at the top three levels, and a 100k-deep document (which
    the JSON parser rejects): read or rejected with an AgentLensError, never a RecursionError."""
    sample = load_sample(name)
    for blob in (b"[" * 1000 + b"]" * 1000, b'{"a":' * 1000 + b"1" + b"}" * 1000):
        for depth in range(1, min(4, len(sample.parsed.by_depth))):
            for position in sample.parsed.by_depth[depth][:10]:
                value, _ = _mutate.edit(sample.parsed.value, position, "replace", "__DEEP__")
                data = _mutate.serialise(sample.parsed, value).replace(b'"__DEEP__"', blob)
                _read_or_reject(sample, data, lenient=False)
                _read_or_reject(sample, data, lenient=True)
    _read_or_reject(sample, b"[" * 100_000 + b"]" * 100_000, lenient=True)


def _read_or_reject(sample: Sample, data: bytes, *, lenient: bool) -> None:
    try:
        list(sample.reader(lenient=lenient).read(sample.path, data))  # type: ignore[call-arg]
    except AgentLensError as exc:
        assert str(sample.path) in str(exc)


def _with_text(parsed: _mutate.Parsed, text: str) -> bytes:
    """The sample with `text` in its text fields: half of it spread as one long value per field
    name, the other half over the remaining fields in pieces (many occurrences), 1 MB in all."""
    fields = list(_text_fields(parsed.value, ()))
    firsts = {position[-1]: position for position in fields}
    long = len(text) // 2 // max(1, len(firsts))
    short = max(2048, len(text) // 2 // max(1, len(fields)))
    value, used = parsed.value, 0
    for position in [*firsts.values(), *(p for p in fields if p not in firsts.values())]:
        size = long if position in firsts.values() else short
        if used + size > len(text):
            break
        value, _ = _mutate.edit(value, position, "replace", text[:size])
        used += size
    return _mutate.serialise(parsed, value)


def _text_fields(value: Any, position: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and key in TEXT_KEYS:
                yield (*position, key)
            else:
                yield from _text_fields(item, (*position, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _text_fields(item, (*position, i))
