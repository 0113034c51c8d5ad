"""An order-independent fingerprint of an Arrow table, hashed column by column with numpy.

checksum.arrow_checksum sorts the rows on every column before hashing them: 1.9 s for a
million rows of five columns, three times what delta-rs takes to write them. Summing a hash of
each row needs no sort: each value becomes a 64-bit word (its bits; for text and bytes a
polynomial hash of them), a row's words are mixed (splitmix64) in column-name order, and the
rows' hashes are added, so row order does not count and a repeated row does. Two lanes with
other seeds make a match a 128-bit coincidence. The words are the values' bits in the table's
own types, so two fingerprints compare only tables of one schema (a batch cast to its Delta
table's schema, and that table's rows).

The values are stored (ledgers, commit notes), so the arithmetic here must never change what
it computes; tests/idempotent/test_arrow_fingerprint.py holds the first implementation and
compares. For speed (0.11 s -> 0.05 s of CPU for the benchmark's 1M rows of five columns), the
mixing runs in place on two reused arrays instead of allocating a temporary per step, text is
hashed in fewer passes (text_hash.py), and a large table is hashed in slices on threads (the
rows' sums add up; numpy's loops release the GIL), one per core.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from dagguard.idempotent.arrow.text_hash import BASE, text_words

# Seeds of the two lanes.
_SEEDS = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F)
_NULL = 0x5BD1E9955BD1E995
_MASK = 2**64 - 1
# Tables of at least two parts of this many rows are fingerprinted in parts on threads, one per
# core this process may use, at most this many.
_PART_ROWS = 250_000
_MAX_THREADS = 4


def fingerprint(table: Any) -> tuple[int, int, int] | None:
    """(rows, lane 1, lane 2) of `table`, or None when numpy is missing or a column's type has
    no word here (decimals, lists, structs...)."""
    sums = _in_parts(table, _lane_sums)
    if sums is None or any(part is None for part in sums):
        return None
    return table.num_rows, sum(part[0] for part in sums) & _MASK, sum(part[1] for part in sums) & _MASK


def _lane_sums(table: Any) -> tuple[int, int] | None:
    """Both lanes' sums of the rows' hashes of `table`, or None."""
    found = _column_words(table)
    if found is None:
        return None
    rows, words, np = found
    row, spare = np.empty(rows, np.uint64), np.empty(rows, np.uint64)
    lanes = []
    for seed in _SEEDS:
        _row_hashes(words, seed, row, spare, np)
        lanes.append(int(row.sum(dtype=np.uint64)))
    return lanes[0], lanes[1]


def _in_parts(table: Any, job: Callable[[Any], Any]) -> list[Any] | None:
    """`job` of consecutive slices of `table`, on threads where it is large enough (numpy's loops
    release the GIL, so the parts run on as many cores), in row order; None without numpy."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    parts = max(1, min(cores, _MAX_THREADS, table.num_rows // _PART_ROWS))
    if parts == 1:
        return [job(table)]
    size = -(-table.num_rows // parts)
    first, *others = [table.slice(start, size) for start in range(0, table.num_rows, size)]
    with ThreadPoolExecutor(len(others)) as pool:  # (the first part in this thread)
        started = [pool.submit(job, part) for part in others]
        return [job(first)] + [future.result() for future in started]


def fingerprint_checksum(found: tuple[int, int, int], kind: str) -> str:
    """`<rows>:<kind>-<lane 1>.<lane 2>` in hex: a fingerprint as a ledger checksum, compared
    only with checksums of the same kind (each engine names its own)."""
    return f"{found[0]}:{kind}-{found[1]:x}.{found[2]:x}"


def _column_words(table: Any) -> tuple[int, list[tuple[str, Any]], Any] | None:
    """(rows, (name, words) per column in name order, numpy), or None."""
    try:
        import numpy as np
    except ImportError:
        return None
    words = []
    for name in sorted(table.column_names):
        column = table.column(name)
        # Each chunk's words (a slice's are its values'), joined: no copy of the values first.
        chunks = [_words(chunk, np) for chunk in column.chunks if len(chunk)] or [_words(column.combine_chunks(), np)]
        if any(chunk is None for chunk in chunks):
            return None
        words.append((name, chunks[0] if len(chunks) == 1 else np.concatenate(chunks)))
    return table.num_rows, words, np


def _row_hashes(words: list[tuple[str, Any]], seed: int, row: Any, spare: Any, np: Any) -> Any:
    """Each row's words mixed in column-name order, from `seed`, into `row` (`spare`: scratch
    of the same length): row = mix(row * BASE + (word ^ salt)) per column."""
    with np.errstate(over="ignore"):
        row.fill(seed)
        for name, word in words:
            salt = int.from_bytes(hashlib.blake2b(f"{seed}:{name}".encode(), digest_size=8).digest(), "little")
            row *= np.uint64(BASE)
            np.bitwise_xor(word, np.uint64(salt), out=spare)
            row += spare
            _mix(row, spare, np)
    return row


def _mix(x: Any, spare: Any, np: Any) -> None:
    """splitmix64's finaliser, in place: every bit of the word reaches every bit of the result."""
    for shift, factor in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None)):
        np.right_shift(x, np.uint64(shift), out=spare)
        x ^= spare
        if factor is not None:
            x *= np.uint64(factor)


def _words(array: Any, np: Any) -> Any:
    """One uint64 per value of a single-chunk array (NULLs a constant), or None."""
    import pyarrow as pa

    t = pa.types
    kind = array.type
    if t.is_string(kind) or t.is_binary(kind) or t.is_large_string(kind) or t.is_large_binary(kind):
        words = text_words(array, np)
    elif t.is_floating(kind):
        floats = array.cast(pa.float64())
        words = np.asarray((floats.fill_null(0) if floats.null_count else floats).to_numpy(zero_copy_only=False)
                           ).view(np.uint64)
    elif t.is_integer(kind) or t.is_boolean(kind):
        words = _int64_words(array.cast(pa.int64(), safe=False), np)
    elif t.is_timestamp(kind) or t.is_date(kind) or t.is_time(kind) or t.is_duration(kind):
        # The stored number, in the column's own unit.
        integers = array.view(pa.int64() if kind.bit_width == 64 else pa.int32())
        words = _int64_words(integers.cast(pa.int64()), np)
    else:
        return None
    if array.null_count:
        nulls = np.asarray(array.is_null().to_numpy(zero_copy_only=False))
        words = np.where(nulls, np.uint64(_NULL), words)
    return words


def _int64_words(array: Any, np: Any) -> Any:
    filled = array.fill_null(0) if array.null_count else array
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=np.int64).view(np.uint64)
