"""A cohort's rows without one dict per run in memory (issue 25).

Each scored row is pickled, whole, to a temporary file as its task finishes (`RowTable.append`);
in memory stay only the columns the cohort tables read (`KEPT`), one array per column: 8 bytes
per run and column, floats and ints unboxed, repeated strings shared. A row is read as a
`RowView`, a Mapping over those columns; any other column comes back from the file (correct,
only slower), and `--out` writes the whole rows from the file (`full_rows`). Pickle, because the
rows must come back exactly (a NaN stays a float, an int an int).
"""

from __future__ import annotations

import pickle
import tempfile
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, overload

from agentlens.made_sequence import MadeSequence
from agentlens.process.cohort_rows import SIGNALS, Row
from agentlens.process.waste import WASTE_KINDS

KEPT = (
    *("task_id", "trajectory_id", "model", "passed", "outcome", "quality_tier", "quality_score"),
    *("composite", "outcome_term", "profile", "mechanism", "tokens", "n_states"),
    *("total_wasted_steps", "waste_severity", "stage_coverage_V", *SIGNALS, *SIGNALS.values()),
    *(f"{kind}_{part}" for kind in WASTE_KINDS for part in ("count", "waste")),
)
"""What `cohort_report`, `curation_table`, `cohort_validity` and the selections read."""

_ABSENT = object()


UNIQUE = {"trajectory_id"}
"""Columns with a value per run: not shared (the cohort passes the run's own id string)."""


class _Column:
    """One column's values: an array while they are all floats (or all ints), else a list with
    equal strings shared (`shared` None: a column of unique values, nothing to share)."""

    __slots__ = ("shared", "values")

    def __init__(self, unique: bool = False) -> None:
        self.values: array[Any] | list[object] | None = None
        self.shared: dict[str, str] | None = None if unique else {}

    def append(self, value: object) -> None:
        if self.values is None:
            kind = {float: "d", int: "q"}.get(type(value))
            self.values = array(kind) if kind else []
        if isinstance(self.values, array):
            typed = type(value) is (float if self.values.typecode == "d" else int)
            try:
                if typed:
                    self.values.append(value)
                    return
            except OverflowError:
                pass
            self.values = list(self.values)
        if isinstance(value, str) and self.shared is not None:
            value = self.shared.setdefault(value, value)
        self.values.append(value)

    def __getitem__(self, index: int) -> object:
        assert self.values is not None
        return self.values[index]


class RowTable:
    """Rows appended in any order, each whole in the file and its `columns` in memory (none:
    rows only written back, as `cohort --no-tables --out` does)."""

    def __init__(self, columns: Sequence[str] = KEPT) -> None:
        self._file = tempfile.TemporaryFile(prefix="agentlens-rows-")  # noqa: SIM115 -- open until close()
        self._starts = array("Q", [0])
        self._columns = {name: _Column(name in UNIQUE) for name in columns}

    def __len__(self) -> int:
        return len(self._starts) - 1

    def append(self, row: Row) -> int:
        """The row's index."""
        data = pickle.dumps(dict(row), protocol=pickle.HIGHEST_PROTOCOL)
        self._file.seek(self._starts[-1])
        self._file.write(data)
        self._starts.append(self._starts[-1] + len(data))
        for name, column in self._columns.items():
            column.append(row.get(name, _ABSENT))
        return len(self) - 1

    def value(self, index: int, name: str) -> object:
        column = self._columns.get(name)
        value = column[index] if column is not None else self.full(index).get(name, _ABSENT)
        if value is _ABSENT:
            raise KeyError(name)
        return value

    def full(self, index: int) -> dict[str, object]:
        """The whole row, from the file."""
        self._file.seek(self._starts[index])
        row: dict[str, object] = pickle.loads(
            self._file.read(self._starts[index + 1] - self._starts[index])
        )
        return row

    def close(self) -> None:
        self._file.close()


class RowView(Mapping[str, object]):
    """Row `index` of a `RowTable`: its kept columns from memory, any other from the file."""

    __slots__ = ("index", "table")

    def __init__(self, table: RowTable, index: int) -> None:
        self.table, self.index = table, index

    def __getitem__(self, name: str) -> object:
        return self.table.value(self.index, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.table.full(self.index))

    def __len__(self) -> int:
        return len(self.table.full(self.index))


class Rows(MadeSequence[int, RowView]):
    """Rows of a table in a given order (a cohort's: split order)."""

    def __init__(self, table: RowTable, order: Iterable[int]) -> None:
        self.table, self.order = table, array("Q", order)
        super().__init__(self.order, partial(RowView, table))


class FullRows(Sequence[dict[str, object]]):
    """The whole rows behind views, read from the file each time they are iterated."""

    def __init__(self, table: RowTable, order: Sequence[int]) -> None:
        self.table, self.order = table, order

    def __len__(self) -> int:
        return len(self.order)

    @overload
    def __getitem__(self, index: int) -> dict[str, object]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, object]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, object] | list[dict[str, object]]:
        if isinstance(index, slice):
            return [self.table.full(i) for i in self.order[index]]
        return self.table.full(self.order[index])

    def __iter__(self) -> Iterator[dict[str, object]]:
        return (self.table.full(i) for i in self.order)


def full_rows(rows: Sequence[Row]) -> Sequence[Row]:
    """What `--out` writes for `rows`: the whole rows when they are views of a table."""
    if isinstance(rows, Rows):
        return FullRows(rows.table, rows.order)
    if rows and all(isinstance(r, RowView) for r in rows):
        views: list[RowView] = list(rows)  # type: ignore[arg-type]
        return FullRows(views[0].table, array("Q", (v.index for v in views)))
    return rows
