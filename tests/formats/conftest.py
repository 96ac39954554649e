from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agentlens.errors import TraceError
from agentlens.formats import read_path
from tests.cli.conftest import run_cli  # noqa: F401  (the `run_cli` fixture)


@pytest.fixture
def read_error(tmp_path: Path) -> Callable[[str, bytes], TraceError]:
    """The error reading `data`, saved as a file of that name, raises (it must raise one)."""

    def read(name: str, data: bytes) -> TraceError:
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(TraceError) as caught:
            read_path(path)
        return caught.value

    return read
