"""An order-independent checksum of the written rows, for the ledger."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any, Sequence

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.batch import AnyBatch, Batch, as_rows

_MODULUS = 1 << 128
# Marks a checksum computed from an Arrow batch (see arrow_checksum): another function of the
# rows, so it is compared only with checksums of the same kind.
ARROW_KIND = "arrow-"
# Marks arrow_fingerprint_checksum's checksums, which the SQL engines record for Arrow batches.
FINGERPRINT_KIND = "arrowfp-"


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)
_since_epoch = datetime.__sub__


def _canonical(value: Any) -> Any:
    if isinstance(value, (list, dict, tuple)):
        return json.dumps(value, sort_keys=True, default=str)
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            # One instant, one value, whatever the zone or the class (pendulum's subtraction
            # returns its own Interval type, so use datetime's).
            return _since_epoch(value, _EPOCH) // _MICROSECOND
        return value.isoformat()
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value.normalize())
    if isinstance(value, float) and value.is_integer():
        return int(value)  # 1.0 from one engine, 1 from another: the same data
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    return value


# Values whose repr is already canonical and stable across runs.
_PLAIN = frozenset((int, str, bool, float, type(None)))


def _canonical_column(values: tuple[Any, ...]) -> Sequence[Any]:
    # Most columns hold only plain values: leave them alone, which is most of the speed.
    kinds = set(map(type, values))
    if kinds <= _PLAIN and float not in kinds:
        return values
    if kinds == {datetime} and all(v.tzinfo is timezone.utc for v in values):
        return [_since_epoch(v, _EPOCH) // _MICROSECOND for v in values]
    return [_canonical(v) for v in values]


def batch_checksum(batch: AnyBatch) -> str:
    """Hex digest equal for the same multiset of rows, whatever their order or column order."""
    if isinstance(batch, ArrowBatch):
        digest = arrow_checksum(batch)
        if digest is not None:
            return digest
        batch = as_rows(batch)
    return _rows_checksum(batch)


def arrow_checksum(batch: ArrowBatch) -> str | None:
    """`rows:arrow-<hex>`: blake2b over the rows sorted on every column (so independent of row
    order), columns in name order; None for types this does not canonicalise (lists, structs)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = sorted(batch.columns)
    try:
        columns = [_canonical_array(batch.column(name)) for name in names]
    except (pa.ArrowException, TypeError, ValueError):
        return None
    if any(column is None for column in columns):
        return None
    table = pa.table(dict(zip(names, columns)))
    digest = hashlib.blake2b(json.dumps(names).encode(), digest_size=16)
    try:
        order = pc.sort_indices(table, sort_keys=[(name, "ascending") for name in names])
        for column in table.take(order).columns:
            for part in _value_bytes(column.combine_chunks()):
                digest.update(part)
    except (pa.ArrowException, TypeError, ValueError):
        return None
    return f"{len(batch)}:{ARROW_KIND}{digest.hexdigest()}"


def write_checksum(batch: AnyBatch) -> str:
    """The checksum a SQL engine's write records for `batch`: an Arrow batch's fingerprint
    (arrow_fingerprint_checksum) where it has one, else batch_checksum()."""
    if isinstance(batch, ArrowBatch):
        digest = arrow_fingerprint_checksum(batch)
        if digest is not None:
            return digest
    return batch_checksum(batch)


def arrow_fingerprint_checksum(batch: ArrowBatch) -> str | None:
    """`rows:arrowfp-<hex>.<hex>`: arrow/fingerprint.py's sum of per-row hashes over the batch
    with one type per kind of value (timestamps in UTC microseconds, dates and ISO date text as
    days), so independent of row order, chunks, zones and widths like arrow_checksum, without
    its sort (1M rows of five columns: 0.09 s ordered or shuffled, against 0.13 s ordered and
    0.34 s shuffled). None for types the fingerprint has no word for (decimals, lists, structs)."""
    import pyarrow as pa

    from dagguard.idempotent.arrow.fingerprint import fingerprint, fingerprint_checksum

    try:
        table = pa.table({name: _fingerprinted_array(batch.column(name)) for name in batch.columns})
    except (pa.ArrowException, TypeError, ValueError):
        return None
    found = fingerprint(table)
    return fingerprint_checksum(found, FINGERPRINT_KIND[:-1]) if found is not None else None


def _fingerprinted_array(column: Any) -> Any:
    """`column` in the type fingerprint() reads for its kind of value: the fingerprint reads a
    value's stored number, so timestamps go to one unit (and zone) and dates to days, as does
    text that is all ISO dates (arrow_checksum takes a date and its text as one value: a text
    `ds` written by overwrite_partition and a DATE one written by replace are the same rows);
    integers, floats and other text it widens itself."""
    import pyarrow as pa

    kind = column.type
    if pa.types.is_timestamp(kind):
        return _canonical_array(column)
    if pa.types.is_date64(kind):
        return column.cast(pa.date32())
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        dates = _iso_dates(column)
        return dates if dates is not None else column
    return column


def _iso_dates(column: Any) -> Any:
    """A text column whose every value is 'YYYY-MM-DD' as date32 days, else None. Arrow's cast
    reads exactly that form of a real day (not '2026-1-02' nor '2026-02-30'), so the text is
    the date's ISO text and nothing else. 1M values: 0.03 s; a 10-character text that is not a
    date is told by its first values (a cast of the whole column takes 0.3 s to fail)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lengths = pc.min_max(pc.binary_length(column))
    if (lengths["min"].as_py(), lengths["max"].as_py()) != (10, 10):
        return None
    try:
        column.slice(0, 64).cast(pa.date32())
        return column.cast(pa.date32())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def recorded_as(recorded: str | None, checksum: str, batch: AnyBatch, kind: str = FINGERPRINT_KIND) -> bool:
    """Is `recorded`, the ledger's last checksum of an interval, this batch's `checksum` (a
    fingerprint of `kind`: the SQL engines' `arrowfp-`, Iceberg's `iceberg-`)? A ledger written
    before the fingerprint holds arrow_checksum's `rows:arrow-...`: that one is computed to
    compare, once (the write records the new kind)."""
    if recorded is None:
        return False
    if recorded == checksum:
        return True
    count, _, digest = checksum.partition(":")
    old_count, _, old_digest = recorded.partition(":")
    return (count == old_count and digest.startswith(kind) and old_digest.startswith(ARROW_KIND)
            and isinstance(batch, ArrowBatch) and arrow_checksum(batch) == recorded)


def _canonical_array(column: Any) -> Any:
    """One type per kind of value, so int32 and int64 (or any zone) give the same bytes."""
    import pyarrow as pa

    t = pa.types
    kind = column.type
    if t.is_timestamp(kind):
        zone = "UTC" if kind.tz else None
        try:
            return column.cast(pa.timestamp("us", tz=zone))
        except pa.ArrowInvalid:  # sub-microsecond digits: nanoseconds, which tell values apart
            return column.cast(pa.timestamp("ns", tz=zone))
    if t.is_signed_integer(kind) or (t.is_unsigned_integer(kind) and kind.bit_width < 64):
        return column.cast(pa.int64())
    if t.is_floating(kind):
        return column.cast(pa.float64())
    if t.is_string(kind) or t.is_large_string(kind) or t.is_string_view(kind):
        return column.cast(pa.large_string())
    if t.is_binary(kind) or t.is_large_binary(kind):
        return column.cast(pa.large_binary())
    if t.is_boolean(kind):
        return column.cast(pa.uint8())  # bytes, not packed bits with undefined padding
    if t.is_date(kind):
        # ISO text, as the row checksum has it: a DATE and its text (a TEXT `ds`) are one value.
        return column.cast(pa.date32()).cast(pa.large_string())
    if t.is_unsigned_integer(kind) or t.is_decimal(kind) or t.is_time(kind) or t.is_duration(kind):
        return column
    return None


def _value_bytes(array: Any) -> list[Any]:
    """The bytes that define `array`'s values: a NULL mask, then the values with NULLs zeroed
    (what lies under a NULL in an Arrow buffer is undefined)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    parts = []
    if array.null_count:
        parts.append(pc.is_null(array).cast(pa.uint8()).buffers()[1])
        array = pc.fill_null(array, _zero(array.type))
    n = len(array)
    buffers = array.buffers()
    if pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type):
        offsets = memoryview(buffers[1]).cast("B")[8 * array.offset: 8 * (array.offset + n + 1)]
        start = int.from_bytes(offsets[:8], "little", signed=True)
        stop = int.from_bytes(offsets[-8:], "little", signed=True)
        lengths = pc.binary_length(array).cast(pa.int64()).buffers()[1]
        parts.append(memoryview(lengths)[: 8 * n])
        parts.append(memoryview(buffers[2])[start:stop])
    else:
        width = array.type.bit_width // 8
        parts.append(memoryview(buffers[1])[width * array.offset: width * (array.offset + n)])
    return parts


def _zero(kind: Any) -> Any:
    """A scalar of type `kind` to put under NULLs."""
    import pyarrow as pa

    if pa.types.is_large_string(kind):
        return pa.scalar("", kind)
    if pa.types.is_large_binary(kind):
        return pa.scalar(b"", kind)
    if pa.types.is_date32(kind):
        return pa.scalar(0, pa.int32()).cast(kind)
    if pa.types.is_decimal(kind):
        return pa.scalar(Decimal(0), kind)
    return pa.scalar(0, pa.int64()).cast(kind)


def same_data(first: str, second: str) -> bool:
    """False when two ledger checksums prove different data; checksums of different kinds
    (Python rows, Arrow, an engine's fingerprint) can only prove it through their row counts."""
    count_a, _, digest_a = first.partition(":")
    count_b, _, digest_b = second.partition(":")
    if count_a != count_b:
        return False
    if _kind(digest_a) != _kind(digest_b):
        return True
    return digest_a == digest_b


def _kind(digest: str) -> str:
    # "arrow-<hex>", "duckdb2.0-<hex>.<hex>" (an engine's own fingerprint), or plain hex (rows).
    return digest.split("-", 1)[0] if "-" in digest else ""


def _rows_checksum(batch: Batch) -> str:
    order = sorted(range(len(batch.columns)), key=lambda i: batch.columns[i])
    names = [batch.columns[i] for i in order]
    blake2b = hashlib.blake2b
    columns = list(zip(*batch.rows)) if batch.rows else []
    canonical = [_canonical_column(columns[i]) for i in order] if columns else []
    total = 0
    # A sum of per-row digests (not a sort) keeps this linear; a sum, not XOR, so that a
    # duplicated row still changes the checksum.
    for row in zip(*canonical):
        total += int.from_bytes(blake2b(repr(row).encode(), digest_size=16).digest(), "big")
    header = int.from_bytes(blake2b(json.dumps(names).encode(), digest_size=16).digest(), "big")
    return f"{len(batch.rows)}:{(total + header) % _MODULUS:032x}"
