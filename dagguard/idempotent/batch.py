"""Rows as users hand them over (dicts, tuples + columns, a DataFrame, an Arrow table),
turned into one shape: column names plus a list of tuples."""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Iterable, Mapping, Sequence, Union

from dagguard.idempotent.arrow.batch import ArrowBatch, from_arrow
from dagguard.idempotent.arrow.from_frame import frame_to_arrow
from dagguard.idempotent.errors import IntervalViolationError
from dagguard.idempotent.identifiers import validate_identifier


@dataclass(frozen=True)
class Batch:
    """The rows to write: `columns` names each position of every tuple in `rows`."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    def index(self, column: str) -> int:
        """Position of `column` in each row."""
        return self.columns.index(column)

    def __len__(self) -> int:
        return len(self.rows)


# What the write path accepts: Python rows, or an Arrow table kept columnar.
AnyBatch = Union[Batch, ArrowBatch]


def as_rows(batch: AnyBatch) -> Batch:
    """The batch as Python tuples (a no-op for a Batch)."""
    return batch if isinstance(batch, Batch) else Batch(batch.columns, batch.rows)


def _from_dicts(rows: list[Mapping[str, Any]], columns: Sequence[str] | None) -> Batch:
    names = tuple(columns) if columns else tuple(rows[0].keys())
    width = len(names)
    # itemgetter raises KeyError on a missing key; with the length check, every row has
    # exactly these keys. It runs in C: this is the per-row cost of a million dicts.
    getter = itemgetter(*names) if width > 1 else (lambda row: (row[names[0]],))
    try:
        if set(map(len, rows)) == {width}:
            return Batch(names, tuple(map(getter, rows)))
    except KeyError:
        pass
    for number, row in enumerate(rows):
        if set(row.keys()) != set(names):
            raise IntervalViolationError(
                f"row {number} has columns {sorted(row.keys())}, expected {sorted(names)}; "
                f"every dict in the batch needs the same keys")
    raise AssertionError("unreachable")


def to_batch(rows: Any, columns: Sequence[str] | None = None) -> AnyBatch:
    """Normalise `rows` into a Batch (an ArrowBatch for Arrow input, and for a DataFrame when
    pyarrow takes its columns); `columns` is required for tuples and for an empty batch."""
    if rows is None:
        # Most likely a task that forgot its return: writing nothing would empty the interval.
        raise IntervalViolationError(
            "the rows are None; return a list (or [] with columns=[...] to empty the interval)")
    if isinstance(columns, (str, bytes)):
        raise IntervalViolationError(f"columns must be a list of names, not the string {columns!r}")
    if hasattr(rows, "to_arrow") and not hasattr(rows, "column_names"):
        rows = rows.to_arrow()  # polars / duckdb relations
    batch: AnyBatch
    if hasattr(rows, "column_names") and hasattr(rows, "to_pylist"):  # pyarrow Table/RecordBatch
        batch = from_arrow(rows)
    elif hasattr(rows, "to_dict") and hasattr(rows, "columns"):  # pandas DataFrame
        batch = frame_to_arrow(rows) or _frame_rows(rows)
    else:
        if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
            # A string would be split into one-character rows, a dict iterated by its keys.
            raise IntervalViolationError(
                f"rows must be a list of dicts or tuples, a DataFrame or an Arrow table, not a "
                f"{type(rows).__name__}" + ("; wrap one row in a list" if isinstance(rows, Mapping) else ""))
        materialised = list(rows) if not isinstance(rows, list) else rows
        if not materialised:
            batch = Batch(tuple(columns or ()), ())
        elif isinstance(materialised[0], Mapping):
            batch = _from_dicts(materialised, columns)
        else:
            # Tuples, lists, sqlite3.Row, SQLAlchemy rows...: anything sized but text.
            odd = [row for row in materialised if isinstance(row, (str, bytes)) or not hasattr(row, "__len__")]
            if odd:
                kinds = sorted({type(row).__name__ for row in odd})
                raise IntervalViolationError(
                    f"each row must be a dict or a tuple of values, not a {', '.join(kinds)}")
            if not columns:
                raise IntervalViolationError(
                    "rows are tuples, so pass columns=[...] naming their positions")
            width = len(columns)
            # map() runs in C: 0.02 s for a million rows, where a Python loop took 0.08 s.
            if set(map(len, materialised)) != {width}:
                for number, row in enumerate(materialised):
                    if len(row) != width:
                        raise IntervalViolationError(
                            f"row {number} has {len(row)} values, expected {width} ({', '.join(columns)})")
            batch = Batch(tuple(columns), tuple(map(tuple, materialised)))
    for column in batch.columns:
        validate_identifier(column, "column")
    if len(set(batch.columns)) != len(batch.columns):
        raise IntervalViolationError(f"the batch names a column twice: {list(batch.columns)}")
    return batch


def _frame_rows(frame: Any) -> Batch:
    """A DataFrame's rows as plain Python values, for columns pyarrow cannot take whole."""
    names = tuple(str(c) for c in frame.columns)
    for name, series in zip(names, (frame.iloc[:, i] for i in range(len(names)))):
        if str(series.dtype).startswith("datetime64[ns") and (series.dt.nanosecond != 0).any():
            # Timestamp.to_pydatetime() would drop them: two keys 1 ns apart would be one.
            first = series[series.dt.nanosecond != 0].iloc[0]
            raise IntervalViolationError(
                f"column {name!r} holds nanoseconds ({first}), which Python datetimes cannot: this "
                f"DataFrame is written row by row (a column has no plain Arrow type) and nothing was "
                f"written; round them (frame[{name!r}].dt.floor('us')) or make every column plain")
    rows = frame.itertuples(index=False, name=None)
    return Batch(names, tuple(tuple(_unpandas(v) for v in row) for row in rows))


def _unpandas(value: Any) -> Any:
    # pandas hands out Timestamp / NaT / numpy scalars; the drivers want plain Python values.
    if value is None:
        return None
    kind = type(value).__name__
    if kind == "NaTType":
        return None
    if kind == "Timestamp":
        return value.to_pydatetime()
    if hasattr(value, "item") and type(value).__module__ == "numpy":
        return value.item()
    try:
        if value != value:  # NaN
            return None
    except (TypeError, ValueError):
        pass
    return value


def with_column(batch: Batch, column: str, value: Any) -> Batch:
    """A copy of `batch` with `column` appended, holding `value` in every row."""
    return Batch(batch.columns + (column,), tuple(row + (value,) for row in batch.rows))


def replace_column(batch: Batch, column: str, values: Iterable[Any]) -> Batch:
    """A copy of `batch` whose `column` holds `values`."""
    at = batch.index(column)
    rows = tuple(row[:at] + (value,) + row[at + 1:] for row, value in zip(batch.rows, values))
    return Batch(batch.columns, rows)
