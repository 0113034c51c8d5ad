"""The first implementation of dagguard.idempotent.arrow.fingerprint (2026-12-07), kept
unchanged as the reference its faster successor must agree with: the values it computed are
stored in ledgers and commit notes. Do not edit; test_arrow_fingerprint.py compares.

An order-independent fingerprint of an Arrow table, hashed column by column with numpy.

checksum.arrow_checksum sorts the rows on every column before hashing them: 1.9 s for a
million rows of five columns, three times what delta-rs takes to write them. Summing a hash of
each row needs no sort (0.2 s): each value becomes a 64-bit word (its bits; for text and bytes
a polynomial hash of them), a row's words are mixed (splitmix64) in column-name order, and the rows' hashes
are added, so row order does not count and a repeated row does. Two lanes with other seeds
make a match a 128-bit coincidence. The words are the values' bits in the table's own types,
so two fingerprints compare only tables of one schema (a batch cast to its Delta table's
schema, and that table's rows).
"""

from __future__ import annotations

import hashlib
from typing import Any

# Seeds of the two lanes; the polynomial base of the text hash (odd, so invertible mod 2**64).
_SEEDS = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F)
_BASE = 0x100000001B3
_NULL = 0x5BD1E9955BD1E995
# Values of a text column hashed together, so the arrays of their bytes stay small.
_BLOCK = 16_384


def fingerprint(table: Any) -> tuple[int, int, int] | None:
    """(rows, lane 1, lane 2) of `table`, or None when numpy is missing or a column's type has
    no word here (decimals, lists, structs...)."""
    found = _column_words(table)
    if found is None:
        return None
    table, words, np = found
    lanes = [int(_row_hashes(words, table.num_rows, seed, np).sum(dtype=np.uint64)) for seed in _SEEDS]
    return table.num_rows, lanes[0], lanes[1]


def fingerprint_checksum(found: tuple[int, int, int], kind: str) -> str:
    """`<rows>:<kind>-<lane 1>.<lane 2>` in hex: a fingerprint as a ledger checksum, compared
    only with checksums of the same kind (each engine names its own)."""
    return f"{found[0]}:{kind}-{found[1]:x}.{found[2]:x}"


def _column_words(table: Any) -> tuple[Any, list[tuple[str, Any]], Any] | None:
    """(the table in one chunk, (name, words) per column in name order, numpy), or None."""
    try:
        import numpy as np
    except ImportError:
        return None
    table = table.combine_chunks()
    words = []
    for name in sorted(table.column_names):
        column = table.column(name)
        array = column.chunk(0) if column.num_chunks else column.combine_chunks()
        word = _words(array, np)
        if word is None:
            return None
        words.append((name, word))
    return table, words, np


def _row_hashes(words: list[tuple[str, Any]], rows: int, seed: int, np: Any) -> Any:
    """Each row's words mixed in column-name order, from `seed`."""
    with np.errstate(over="ignore"):
        row = np.full(rows, seed, dtype=np.uint64)
        for name, word in words:
            salt = np.uint64(int.from_bytes(hashlib.blake2b(f"{seed}:{name}".encode(), digest_size=8).digest(),
                                            "little"))
            row = _mix(row * np.uint64(_BASE) + (word ^ salt), np)
    return row


def _mix(x: Any, np: Any) -> Any:
    """splitmix64's finaliser: every bit of the word reaches every bit of the result."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _words(array: Any, np: Any) -> Any:
    """One uint64 per value of a single-chunk array (NULLs a constant), or None."""
    import pyarrow as pa

    t = pa.types
    kind = array.type
    if t.is_string(kind) or t.is_binary(kind) or t.is_large_string(kind) or t.is_large_binary(kind):
        words = _text_words(array, np)
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


def _text_words(array: Any, np: Any) -> Any:
    """A polynomial hash of each value's bytes, sum((byte_i + 1) * BASE**i) with i counted from
    the value's first byte, mixed with its length; computed for a block of values at a time, so
    the arrays stay small enough for the cache (one pass over a 12 MB buffer as a whole took
    2 s of page faults on a loaded machine)."""
    import pyarrow as pa

    large = pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type)
    n = len(array)
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64 if large else np.int32)[array.offset:array.offset + n + 1]
    offsets = offsets.astype(np.int64)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    lengths = offsets[1:] - offsets[:-1]
    longest = int(lengths.max()) if n else 0
    with np.errstate(over="ignore"):
        if longest:
            powers = np.concatenate([np.ones(1, np.uint64), np.cumprod(np.full(longest - 1, _BASE, np.uint64))])
        words = np.zeros(n, dtype=np.uint64)
        for first in range(0, n, _BLOCK):
            last = min(first + _BLOCK, n)
            low, high = int(offsets[first]), int(offsets[last])
            if high == low:
                continue
            sizes = lengths[first:last]
            # Each byte's position in its value: its index minus its value's first index.
            starts = offsets[first:last] - low
            position = np.arange(high - low, dtype=np.int64) - np.repeat(starts, sizes)
            weighted = (data[low:high].astype(np.uint64) + np.uint64(1)) * powers[position]
            filled = sizes > 0
            words[first:last][filled] = np.add.reduceat(weighted, starts[filled])
        return words ^ (lengths.astype(np.uint64) * np.uint64(0xFF51AFD7ED558CCD))
