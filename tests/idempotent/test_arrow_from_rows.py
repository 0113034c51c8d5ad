"""Python rows become an Arrow table once, only where pyarrow keeps every value exactly."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from dagguard.idempotent import IntervalViolationError, write_interval
from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.arrow.from_rows import rows_to_arrow
from dagguard.idempotent.batch import Batch, to_batch
from dagguard.idempotent.write import WriteSpec, prepare_batch
from tests.idempotent.helpers import DAY1, at

pa = pytest.importorskip("pyarrow")

PLUS_TWO = timezone(timedelta(hours=2))


def _batch(**columns):
    names = tuple(columns)
    return Batch(names, tuple(zip(*columns.values())))


def test_plain_columns_convert_with_their_values():
    batch = _batch(k=(1, None, 3), ts=(at(1), at(1, 1), None), ds=(date(2026, 1, 1),) * 3,
                   v=("a", "", None), amount=(0.5, float("inf"), None), ok=(True, False, None))
    converted = rows_to_arrow(batch)
    assert isinstance(converted, ArrowBatch)
    assert [str(t) for t in converted.table.schema.types] == [
        "int64", "timestamp[us, tz=UTC]", "date32[day]", "string", "double", "bool"]
    assert [tuple(r) for r in zip(*converted.table.to_pydict().values())] == list(batch.rows)


def test_the_users_rows_are_kept_for_error_reports():
    batch = _batch(k=(1, 2), ts=(at(1, 2).astimezone(PLUS_TWO), at(1, 3)))
    converted = rows_to_arrow(batch)
    assert converted.rows is batch.rows  # not rebuilt from Arrow, whose zone is the first value's


def test_aware_datetimes_in_several_zones_keep_their_instants():
    batch = _batch(ts=(at(1, 0).astimezone(PLUS_TWO), at(1, 5)))
    converted = rows_to_arrow(batch)
    assert [v.astimezone(timezone.utc) for v in converted.table.column("ts").to_pylist()] == [at(1, 0), at(1, 5)]


def test_pendulum_datetimes_convert():
    pendulum = pytest.importorskip("pendulum")
    value = pendulum.datetime(2026, 1, 1, 6, tz="Europe/Paris")
    converted = rows_to_arrow(_batch(ts=(value, value.add(hours=1))))
    assert converted.table.column("ts").to_pylist()[0] == value


@pytest.mark.parametrize("values, why", [
    ((1, "a"), "int and text in one column"),
    ((1, 2.5), "int and float: Arrow would make 1 a float"),
    ((True, 1), "bool and int"),
    ((None, None), "only NULLs: no type"),
    ((Decimal("1.10"), Decimal("2")), "Decimal: the drivers adapt it"),
    ((b"x", b"y"), "bytes"),
    ((2 ** 70, 1), "beyond int64"),
    (("\ud800", "a"), "a lone surrogate: not UTF-8"),
    (({"a": 1}, {"a": 2}), "dicts"),
])
def test_columns_without_an_exact_arrow_type_stay_python_rows(values, why):
    assert rows_to_arrow(_batch(k=(1, 2), x=values)) is None, why


def test_naive_next_to_aware_datetimes_stay_python_rows():
    naive = datetime(2026, 1, 1, 3)
    # pyarrow would take the naive value as UTC; the row checks refuse it instead.
    assert pa.array([at(1, 1), naive]).type == pa.timestamp("us", tz="UTC")
    assert rows_to_arrow(_batch(ts=(at(1, 1), naive))) is None
    assert isinstance(rows_to_arrow(_batch(ts=(naive, naive))), ArrowBatch)  # all naive: exact


def test_an_empty_batch_stays_python_rows():
    assert rows_to_arrow(Batch(("k",), ())) is None


def test_prepare_batch_converts_dicts_and_keeps_rows_that_cannot():
    spec = WriteSpec.build("events", "merge", "ts", ["k"], False, "ds")
    converted = prepare_batch(spec, [{"k": i, "ts": at(1, 1)} for i in range(3)], None, DAY1)
    assert isinstance(converted, ArrowBatch)
    kept = prepare_batch(spec, [{"k": 1, "ts": at(1, 1)}, {"k": "2", "ts": at(1, 2)}], None, DAY1)
    assert isinstance(kept, Batch)


def test_a_violation_in_converted_rows_names_the_row_as_given():
    spec = WriteSpec.build("events", "replace", "ts", None, False, "ds")
    late = at(2, 0).astimezone(PLUS_TWO)
    rows = [{"k": 1, "ts": at(1, 1)}, {"k": 2, "ts": late}]
    with pytest.raises(IntervalViolationError) as error:
        prepare_batch(spec, rows, None, DAY1)
    assert repr(late) in str(error.value)  # its own zone, not the UTC Arrow would give back


def _table(db, name):
    sqlite, iceberg = db.dialect == "sqlite", db.dialect == "iceberg"
    db.create(name, f"k INTEGER, ts {db.ts}, ds {'TEXT' if sqlite else 'date'}, v TEXT, "
                    f"amount {'REAL' if sqlite else 'DOUBLE' if iceberg else 'double precision'}, "
                    f"ok {'INTEGER' if sqlite else 'boolean'}")
    return name


@pytest.mark.parametrize("strategy", ["replace", "merge", "overwrite_partition"])
def test_converted_rows_write_what_the_row_path_writes(db, strategy, monkeypatch):
    # Enough rows to matter, in two zones, with NULLs, quotes, newlines and special floats.
    rows = [{"k": i, "ts": (at(1) + timedelta(seconds=17 * i)).astimezone(PLUS_TWO if i % 2 else timezone.utc),
             "ds": date(2026, 1, 1), "v": None if i % 7 == 0 else f'row "{i}",\n{i}',
             "amount": float("nan") if i == 5 else i / 3, "ok": i % 3 == 0}
            for i in range(3_000)]
    options = dict(time_column="ts", strategy=strategy, unique_key=["k"] if strategy == "merge" else None)
    conn = db.connect()
    try:
        write_interval(conn, _table(db, "converted"), rows, DAY1, **options)
        monkeypatch.setattr("dagguard.idempotent.write_prepare.rows_to_arrow", lambda batch: None)
        write_interval(conn, _table(db, "as_rows"), rows, DAY1, **options)
    finally:
        conn.close()
    converted, as_rows = db.rows("converted"), db.rows("as_rows")
    assert len(converted) == 3_000
    # NaN != NaN: compare its text.
    assert [tuple(map(repr, r)) for r in converted] == [tuple(map(repr, r)) for r in as_rows]


def test_to_batch_alone_does_not_convert():
    # Conversion belongs to the write path; to_batch keeps describing what the user gave.
    assert isinstance(to_batch([{"k": 1}]), Batch)
