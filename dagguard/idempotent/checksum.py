"""An order-independent checksum of the written rows, for the ledger."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime, time, timezone
from decimal import Decimal
from typing import Any

from dagguard.idempotent.batch import Batch

_MODULUS = 1 << 128


def _canonical(value: Any) -> Any:
    if isinstance(value, (list, dict, tuple)):
        return json.dumps(value, sort_keys=True, default=str)
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(timezone.utc)
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


# Values whose repr is already canonical and stable across engines.
_PLAIN = (int, str, bool, type(None))


def batch_checksum(batch: Batch) -> str:
    """Hex digest equal for the same multiset of rows, whatever their order or column order."""
    order = sorted(range(len(batch.columns)), key=lambda i: batch.columns[i])
    names = [batch.columns[i] for i in order]
    blake2b = hashlib.blake2b
    total = 0
    for row in batch.rows:
        # A sum of per-row digests (not a sort) keeps this linear; a sum, not XOR, so that a
        # duplicated row still changes the checksum.
        values = [row[i] if type(row[i]) in _PLAIN else _canonical(row[i]) for i in order]
        total += int.from_bytes(blake2b(repr(values).encode(), digest_size=16).digest(), "big")
    header = int.from_bytes(blake2b(json.dumps(names).encode(), digest_size=16).digest(), "big")
    return f"{len(batch.rows)}:{(total + header) % _MODULUS:032x}"
