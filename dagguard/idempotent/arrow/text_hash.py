"""The text hash of the Arrow fingerprint: one 64-bit word per string or bytes value, a
polynomial of its bytes, sum((byte_i + 1) * BASE**i) mod 2**64 with i counted from the value's
first byte, mixed with its length.

The words are stored in fingerprints (ledgers, commit notes), so they must never change;
tests/idempotent/test_arrow_fingerprint.py compares them with the first implementation's.
That one computed each byte's position in its value (eight passes over the bytes, 0.055 s
for 1M values of 7-13 bytes); this one weights each byte by its position in a block and
divides the value's start out with BASE's inverse (three passes, about 0.025 s), and hashes
each distinct value once where a column has few (pyarrow's dictionary_encode, in C).
"""

from __future__ import annotations

from typing import Any

# The polynomial base (odd, so invertible mod 2**64) and its inverse; the length's multiplier.
BASE = 0x100000001B3
BASE_INVERSE = pow(BASE, -1, 2**64)
_LENGTH = 0xFF51AFD7ED558CCD
# Bytes hashed together, so the arrays of their words stay in the cache (one pass over a 12 MB
# buffer as a whole took 2 s of page faults on a loaded machine); 128 KiB blocks were the
# fastest of 16 KiB-1 MiB for 1M short values.
_BLOCK_BYTES = 1 << 17
# Text is dictionary-encoded first when a sample of this many values has at most one distinct
# value in _DISTINCT, and hashed per distinct value if the whole column has as few.
_SAMPLE = 4096
_DISTINCT = 16


def text_words(array: Any, np: Any) -> Any:
    """The text hash of each value (see _block_text_words); of each distinct value once, then
    gathered, where a sample says there are few (a `ds` or a category column)."""
    if len(array) >= 2 * _SAMPLE and len(array.slice(0, _SAMPLE).dictionary_encode().dictionary) * _DISTINCT <= _SAMPLE:
        encoded = array.dictionary_encode()
        if len(encoded.dictionary) * _DISTINCT <= len(array):
            indices = encoded.indices
            if indices.null_count:
                indices = indices.fill_null(0)  # (NULLs get their own word in _words)
            return _block_text_words(encoded.dictionary, np)[np.asarray(indices.to_numpy(zero_copy_only=False))]
    return _block_text_words(array, np)


def _block_text_words(array: Any, np: Any) -> Any:
    """A polynomial hash of each value's bytes, sum((byte_i + 1) * BASE**i) with i counted from
    the value's first byte, mixed with its length. Computed a block of bytes at a time, each
    byte weighted by BASE**j with j counted from the block's first byte: a value starting at j0
    then sums BASE**j0 times its hash, and BASE (odd) has an inverse mod 2**64 that divides it
    out. Three passes over the bytes (widen, weight, sum per value) instead of computing each
    byte's position in its value."""
    import pyarrow as pa

    large = pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type)
    n = len(array)
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64 if large else np.int32)[array.offset:array.offset + n + 1]
    offsets = offsets.astype(np.int64)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    lengths = offsets[1:] - offsets[:-1]
    words = np.zeros(n, dtype=np.uint64)
    if n and offsets[n] > offsets[0]:
        # Blocks of whole values, about _BLOCK_BYTES each (a longer value is a block of its own).
        marks = np.arange(int(offsets[0]), int(offsets[n]), _BLOCK_BYTES, dtype=np.int64)
        cuts = np.unique(np.concatenate([[0], np.searchsorted(offsets, marks, side="right") - 1, [n]]))
        span = int((offsets[cuts[1:]] - offsets[cuts[:-1]]).max())
        powers, inverses = _powers(span, BASE, np), _powers(span, BASE_INVERSE, np)
        weighted = np.empty(span, np.uint64)
        empty = bool((lengths == 0).any())
        with np.errstate(over="ignore"):
            for first, last in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
                low, high = int(offsets[first]), int(offsets[last])
                if high == low:
                    continue
                block = weighted[:high - low]
                np.copyto(block, data[low:high], casting="unsafe")
                block += np.uint64(1)
                block *= powers[:high - low]
                starts = offsets[first:last] - low
                if empty:  # (reduceat would give an empty value its next byte)
                    filled = lengths[first:last] > 0
                    starts = starts[filled]
                    words[first:last][filled] = np.add.reduceat(block, starts) * inverses[starts]
                else:
                    np.multiply(np.add.reduceat(block, starts), inverses[starts], out=words[first:last])
    with np.errstate(over="ignore"):
        words ^= lengths.astype(np.uint64) * np.uint64(_LENGTH)
    return words


def _powers(count: int, base: int, np: Any) -> Any:
    """base**0 .. base**(count - 1) mod 2**64."""
    powers = np.full(count, base, np.uint64)
    if count:
        powers[0] = 1
        with np.errstate(over="ignore"):
            np.cumprod(powers, out=powers)
    return powers
