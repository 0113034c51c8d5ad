"""An order-independent checksum of the written rows, for the ledger."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any, Sequence

from dagguard.idempotent.arrow_batch import ArrowBatch
from dagguard.idempotent.batch import AnyBatch, Batch, as_rows

_MODULUS = 1 << 128
# Marks a checksum computed from an Arrow batch (see arrow_checksum): another function of the
# rows, so it is compared only with checksums of the same kind.
ARROW_KIND = "arrow-"


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
    """`rows:arrow-<hex>`: blake2b of the rows sorted on every column (so order-independent),
    columns in name order, as CSV text; None for types pyarrow cannot sort or write as CSV."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    names = sorted(batch.columns)
    table = batch.table.select(names)
    try:
        order = pc.sort_indices(table, sort_keys=[(name, "ascending") for name in names])
        buffer = io.BytesIO()
        # The CSV text depends on the values only: not on chunking, buffer layout or bytes
        # hidden under NULLs, as a hash of the raw buffers would.
        pcsv.write_csv(table.take(order), buffer, pcsv.WriteOptions(quoting_style="all_valid"))
    except (pa.ArrowException, TypeError, ValueError):
        return None
    digest = hashlib.blake2b(buffer.getbuffer(), digest_size=16).hexdigest()
    return f"{len(batch)}:{ARROW_KIND}{digest}"


def same_data(first: str, second: str) -> bool:
    """False when two ledger checksums prove different data; checksums of different kinds
    (Arrow or Python rows) can only prove it through their row counts."""
    count_a, _, digest_a = first.partition(":")
    count_b, _, digest_b = second.partition(":")
    if count_a != count_b:
        return False
    if digest_a.startswith(ARROW_KIND) != digest_b.startswith(ARROW_KIND):
        return True
    return digest_a == digest_b


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
