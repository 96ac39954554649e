"""`read_path` turns an exception escaping a reader (a reader bug) into one line that names the
file, the reader, the exception and where it was raised, and survives a hostile exception text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from agentlens.errors import TraceError
from agentlens.formats import read_path
from agentlens.trajectory import Trajectory


class BrokenReader:
    """Failure injection: raises what the file's first byte selects."""

    name: ClassVar[str] = "broken"

    def __init__(self, *, lenient: bool = False) -> None:
        self.lenient = lenient

    @classmethod
    def handles_location(cls, path: Path) -> bool:
        return True

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        return True

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        deep: list[object] = []
        for _ in range(5000):
            deep = [deep]
        errors = {
            b"k": KeyError("steps"),
            b"o": OverflowError("timestamp out of range for platform time_t"),
            b"d": KeyError(deep),
        }
        raise errors[data[:1]]
        yield  # pragma: no cover - makes this a generator like the real readers


def _too_deep_to_show() -> bool:
    """Whether this Python's `str()` of a 5000-deep list overflows (3.11 and 3.12; 3.13 shows
    it)."""
    deep: list[object] = []
    for _ in range(5000):
        deep = [deep]
    try:
        str(KeyError(deep))
    except RecursionError:
        return True
    return False


OLD_REPR = _too_deep_to_show()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"k", "KeyError: 'steps'"),
        (b"o", "OverflowError: timestamp out of range"),
        # where `str()` of it works, the line shows its start
        (
            b"d",
            "KeyError: (message too deeply nested to show)" if OLD_REPR else "KeyError: [[[[[",
        ),
    ],
)
def test_reader_bug_is_one_line_naming_file_and_place(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(content)
    with pytest.raises(TraceError) as caught:
        read_path(path, format=f"{__name__}:BrokenReader")
    message = str(caught.value)
    assert message.startswith(f"{path} [broken]: unexpected shape: {expected}")
    assert "test_reader_bug_message.py:" in message and "a reader bug" in message
    assert "\n" not in message
