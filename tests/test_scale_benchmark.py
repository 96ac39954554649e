"""`benchmarks/scale.py --largest`: which file it measures (docs/security.md, the input size cap)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCALE = Path(__file__).resolve().parents[1] / "benchmarks" / "scale.py"


def scale() -> ModuleType:
    """The benchmark as a module, kept in sys.modules (its dataclasses look themselves up there)."""
    if "scale_benchmark" not in sys.modules:
        spec = importlib.util.spec_from_file_location("scale_benchmark", SCALE)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["scale_benchmark"] = module
        spec.loader.exec_module(module)
    return sys.modules["scale_benchmark"]


def test_the_largest_shared_trace_is_the_claude_code_session(data_dir: Path) -> None:
    largest = scale().largest_trace(data_dir)
    assert largest is not None
    assert largest.relative_to(data_dir).as_posix() == (
        "formats/claude-code/marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
    )


def test_a_larger_file_no_reader_claims_is_passed_over(data_dir: Path, tmp_path: Path) -> None:
    trace = data_dir / "formats" / "claude-code" / "marot-spotter" / "short.jsonl"
    (tmp_path / "short.jsonl").symlink_to(trace)
    (tmp_path / "notes.json").write_text("not a trace\n" * 10_000)
    assert scale().largest_trace(tmp_path) == tmp_path / "short.jsonl"
    (tmp_path / "short.jsonl").unlink()
    assert scale().largest_trace(tmp_path) is None
