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


# -- the stored values: every change for speed must keep them ----------------------------------

from tests.idempotent import fingerprint_reference as reference  # noqa: E402


def test_the_values_stored_in_ledgers_stay_the_same():
    """Literal values of the first implementation: ledgers and commit notes hold these."""
    assert fingerprint(TABLE) == (4, 0xB82705E71730CD4D, 0x9A9084857A7724B6)


def _all_types(rows: int, seed: int):
    """`rows` rows of every type with a word, NULLs in every column, text of every shape."""
    import numpy as np

    rng = np.random.default_rng(seed)
    nulls = rng.random(rows) < 0.1

    def masked(values, kind):
        return pa.array(values, kind, mask=nulls)

    lengths = rng.choice([0, 1, 2, 7, 13, 40, 300], size=rows, p=[0.1, 0.1, 0.1, 0.3, 0.2, 0.15, 0.05])
    text = ["".join(chr(97 + int(c)) for c in rng.integers(0, 26, int(n))) for n in lengths]
    integers = rng.integers(-2**62, 2**62, rows)
    return pa.table({
        "i8": masked(integers % 100 - 50, pa.int8()), "u32": masked(integers % 2**32, pa.uint32()),
        "i64": masked(integers, pa.int64()), "u64": masked(np.abs(integers).astype(np.uint64) * 2, pa.uint64()),
        "f32": masked(rng.standard_normal(rows).astype(np.float32), pa.float32()),
        "f64": masked(rng.standard_normal(rows), pa.float64()), "b": masked(rng.random(rows) < 0.5, pa.bool_()),
        "d32": masked(integers % 30000, pa.int32()).cast(pa.date32()),
        "d64": masked(integers % 10**12, pa.int64()).cast(pa.date64()),
        "t32": masked(integers % 86400, pa.int32()).cast(pa.time32("s")),
        "t64": masked(integers % (86400 * 10**9), pa.int64()).cast(pa.time64("ns")),
        "ts": masked(integers % 10**15, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
        "tsn": masked(integers % 10**18, pa.int64()).cast(pa.timestamp("ns")),
        "dur": masked(integers % 10**9, pa.int64()).cast(pa.duration("ms")),
        "s": masked(text, pa.string()), "ls": masked(text, pa.large_string()),
        "bin": masked([t.encode() for t in text], pa.binary()),
        "lbin": masked([t.encode() * 3 for t in text], pa.large_binary()),
        "ds": masked([f"2026-01-{int(d):02d}" for d in rng.integers(1, 29, rows)], pa.string()),
        "empty": masked([""] * rows, pa.string()),
    })


def _variants(table):
    """The same rows as one chunk, in uneven chunks (one of them empty), and as a slice."""
    cut = table.num_rows // 3
    yield "one-chunk", table
    yield "chunked", pa.concat_tables([table.slice(0, cut), table.slice(cut, 0), table.slice(cut)])
    yield "sliced", table.slice(5, table.num_rows - 11)


@pytest.mark.parametrize("rows", [0, 1, 17, 20_000])
def test_it_computes_what_the_first_implementation_did(rows, monkeypatch):
    """Every type, NULLs, empty and long text, low- and high-cardinality text (the `ds` column
    takes the dictionary path at 20,000 rows), chunks and slices, in one part and in parts."""
    from dagguard.idempotent.arrow import fingerprint as fast

    table = _all_types(rows, seed=rows)
    for part_rows in (10**9, 3_000):  # one part; parts on threads
        monkeypatch.setattr(fast, "_PART_ROWS", part_rows)
        for label, variant in _variants(table):
            assert fast.fingerprint(variant) == reference.fingerprint(variant), (label, part_rows)


def test_text_across_blocks_and_dictionaries_hashes_as_before(monkeypatch):
    """Values longer than a block, a block boundary inside a run of empty strings, a dictionary
    whose sample looked small but whose column is not, NULLs through the dictionary path."""
    import numpy as np

    from dagguard.idempotent.arrow import fingerprint as fast, text_hash

    monkeypatch.setattr(text_hash, "_BLOCK_BYTES", 64)
    long_values = ["x" * 1000, "", "", "ab", "y" * 65, None, "z" * 64, ""]
    few = [None if i % 97 == 0 else f"category {i % 5}" for i in range(20_000)]
    # A sample of few values, then many distinct ones: the dictionary is built and then refused.
    misleading = [f"c{i % 3}" for i in range(text_hash._SAMPLE)] + [f"v{i}" for i in range(20_000)]
    for values in (long_values * 50, few, misleading, [""] * 9000, ["é✓"] * 10):
        array = pa.array(values)
        assert np.array_equal(fast._words(array, np), reference._words(array, np)), values[:3]
        table = pa.table({"t": array, "b": array.cast(pa.binary())})
        assert fast.fingerprint(table) == reference.fingerprint(table)


def test_types_without_words_still_give_none_in_parts(monkeypatch):
    from decimal import Decimal

    from dagguard.idempotent.arrow import fingerprint as fast

    monkeypatch.setattr(fast, "_PART_ROWS", 2)
    table = pa.table({"k": pa.array(range(10)), "d": pa.array([Decimal("1.5")] * 10)})
    assert fast.fingerprint(table) is None
    assert fast.fingerprint(table.slice(0, 0)) is None
