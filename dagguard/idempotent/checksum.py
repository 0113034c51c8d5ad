"""An order-independent checksum of the written rows, for the ledger."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any, Sequence

from dagguard.idempotent.batch import Batch

_MODULUS = 1 << 128


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


def batch_checksum(batch: Batch) -> str:
    """Hex digest equal for the same multiset of rows, whatever their order or column order."""
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
