"""A batch that stays a pyarrow Table: validated, hashed and loaded column by column.

Turning a million-row Arrow table (or a DataFrame's) into Python tuples costs seconds, more
than the database spends writing it; this keeps such a batch columnar from the user's hands to
the engine's bulk path. Python rows are built only when something needs them (an error report,
an engine without a columnar path).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any


@dataclass(frozen=True)
class ArrowBatch:
    """The rows to write as a pyarrow Table whose column names are `columns`."""

    columns: tuple[str, ...]
    table: Any  # pyarrow.Table

    def index(self, column: str) -> int:
        """Position of `column` in each row."""
        return self.columns.index(column)

    def __len__(self) -> int:
        return self.table.num_rows

    @cached_property
    def rows(self) -> tuple[tuple[Any, ...], ...]:
        """The rows as Python tuples: slow, built only on first use."""
        values = [self.table.column(i).to_pylist() for i in range(len(self.columns))]
        return tuple(zip(*values)) if values else ()

    def column(self, name: str) -> Any:
        """One column as a pyarrow ChunkedArray."""
        return self.table.column(name)

    def with_array(self, name: str, array: Any) -> "ArrowBatch":
        """A copy whose column `name` holds `array` (appended when the batch lacks it)."""
        if name in self.columns:
            return ArrowBatch(self.columns, self.table.set_column(self.index(name), name, array))
        return ArrowBatch(self.columns + (name,), self.table.append_column(name, array))

    def with_constant(self, name: str, value: Any) -> "ArrowBatch":
        """A copy whose column `name` holds `value` in every row."""
        import pyarrow as pa

        return self.with_array(name, pa.repeat(pa.scalar(value), len(self)))


def from_arrow(table: Any) -> ArrowBatch:
    """Wrap a pyarrow Table or RecordBatch, chunks combined so every later step sees one layout."""
    import pyarrow as pa

    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    return ArrowBatch(tuple(table.column_names), table)
