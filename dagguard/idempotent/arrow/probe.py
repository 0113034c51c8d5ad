"""A cheap summary of a batch's rows that tells, without its fingerprint, that two batches
differ: the table formats record it in each commit and skip the fingerprint's wait when a
rerun's batch cannot be the interval's last one."""

from __future__ import annotations

import hashlib
from typing import Any


def probe(rows: Any) -> str:
    """A cheap, order-independent summary of `rows` (a pyarrow Table): the row count and, per
    fixed-width column of 32 or 64 bits, its null count and the wrapping sum of its values'
    bits (0.2 ms per million values). Two probes that differ prove the rows differ; equal ones
    prove nothing (text columns are not in it), so a write compares fingerprints then."""
    import pyarrow as pa
    import pyarrow.compute as pc

    parts = [str(len(rows))]
    for field in rows.schema:
        width = getattr(field.type, "bit_width", 0) if pa.types.is_primitive(field.type) else 0
        if width not in (32, 64):
            continue
        column = rows.column(field.name)
        bits = pa.int64() if width == 64 else pa.int32()
        total = pc.sum(pa.chunked_array([chunk.view(bits) for chunk in column.chunks], bits)).as_py()
        parts.append(f"{field.name}:{column.null_count}:{total}")
    return hashlib.blake2b(";".join(parts).encode(), digest_size=8).hexdigest()
