"""The numpy fingerprint of an Arrow table (Delta's checksum): equal for the same rows in any
order or chunking, different when a value, a NULL, a repeated row or a column's name differs."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("numpy")

from dagguard.idempotent.arrow.fingerprint import fingerprint  # noqa: E402

UTC = timezone.utc
TABLE = pa.table({
    "k": pa.array([1, 2, None, 4], pa.int64()),
    "ts": pa.array([datetime(2026, 1, 1, h, tzinfo=UTC) for h in range(4)], pa.timestamp("us", tz="UTC")),
    "v": pa.array(["a", "", None, "abc"]),
    "amount": pa.array([0.5, None, 1.0, -0.0]),
    "ds": pa.array([date(2026, 1, 1)] * 4),
    "ok": pa.array([True, False, None, True]),
})


def _with(name: str, values: list, kind=None):
    return TABLE.set_column(TABLE.column_names.index(name), name, pa.array(values, kind or TABLE.schema.field(name).type))


def test_row_order_chunks_and_slices_do_not_count():
    base = fingerprint(TABLE)
    assert base[0] == 4
    assert fingerprint(TABLE.take([3, 1, 0, 2])) == base
    assert fingerprint(pa.concat_tables([TABLE.slice(0, 1), TABLE.slice(1)])) == base
    sliced = TABLE.slice(1)
    rebuilt = pa.table({c: pa.array(sliced.column(c).to_pylist(), sliced.column(c).type) for c in sliced.column_names})
    assert fingerprint(sliced) == fingerprint(rebuilt)


@pytest.mark.parametrize("changed", [
    _with("v", ["a", None, "", "abc"]),             # the empty string and NULL swap rows
    _with("v", ["ab", "", None, "c"]),              # bytes move between values
    _with("v", ["b", "a", None, "abc"]),            # values swap rows within a column
    _with("k", [1, 2, 0, 4]),                       # NULL is not 0
    _with("amount", [0.5, None, 1.0, 0.0]),         # -0.0 is stored apart from 0.0
    _with("ts", [datetime(2026, 1, 1, h, 0, 0, 1, tzinfo=UTC) for h in range(4)]),
    TABLE.rename_columns(["k", "ts", "w", "amount", "ds", "ok"]),
    pa.concat_tables([TABLE, TABLE.slice(0, 1)]),   # a repeated row counts
], ids=["null-vs-empty", "bytes-moved", "values-swapped", "null-vs-zero", "negative-zero", "a-microsecond",
        "column-name", "repeated-row"])
def test_any_difference_in_the_rows_changes_it(changed):
    assert fingerprint(changed) != fingerprint(TABLE)


def test_types_it_has_no_word_for_give_none():
    from decimal import Decimal

    assert fingerprint(pa.table({"d": pa.array([Decimal("1.5")])})) is None
    assert fingerprint(pa.table({"l": pa.array([[1, 2]])})) is None


def test_row_hashes_follow_the_rows_and_a_changed_value_changes_only_its_row():
    from dagguard.idempotent.arrow.fingerprint import row_hashes

    hashes = row_hashes(TABLE)
    assert len(set(hashes.tolist())) == 4
    assert row_hashes(TABLE.take([3, 1, 0, 2])).tolist() == [hashes[i] for i in (3, 1, 0, 2)]
    changed = row_hashes(_with("v", ["a", "", None, "abd"]))
    assert [a == b for a, b in zip(changed.tolist(), hashes.tolist())] == [True, True, True, False]
    assert row_hashes(pa.table({"l": pa.array([[1, 2]])})) is None
