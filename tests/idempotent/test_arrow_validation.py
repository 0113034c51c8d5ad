"""The Arrow duplicate-key check answers as the row check does, whatever the batch's order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dagguard.idempotent.arrow.batch import from_arrow
from dagguard.idempotent.arrow.validation import _has_duplicate_keys

pa = pytest.importorskip("pyarrow")

KEYS = st.one_of(st.none(), st.integers(-3, 3))


def _repeats(keys: list) -> bool:
    # Python's == on None is the IS NOT DISTINCT FROM the batch must be unique under.
    return len(set(keys)) != len(keys)


def _batch(columns: dict) -> object:
    return from_arrow(pa.table({name: pa.array(values, pa.int64()) for name, values in columns.items()}))


@settings(max_examples=300, deadline=None)
@given(st.lists(KEYS, max_size=12))
def test_one_key_column(keys):
    assert _has_duplicate_keys(_batch({"k": keys}), ("k",)) == _repeats(keys)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(KEYS, KEYS), max_size=12))
def test_two_key_columns(pairs):
    batch = _batch({"a": [a for a, _ in pairs], "b": [b for _, b in pairs]})
    assert _has_duplicate_keys(batch, ("a", "b")) == _repeats(pairs)


@pytest.mark.parametrize("keys, expected", [
    ([1, 2, 3, 4], False),            # ascending: the one-pass answer
    ([4, 3, 2, 1], False),            # descending
    ([3, 1, 4, 2], False),            # unordered: the hash answer
    ([1, 2, 3, 3], True),             # ordered, but not strictly
    ([1, 2, 3, 1], True),             # ordered but for the last row
    ([1, None, 2], False),            # a NULL breaks the order, not the uniqueness
    ([None, 2, None], True),          # NULL matches NULL
])
def test_ordered_and_unordered_batches(keys, expected):
    assert _has_duplicate_keys(_batch({"k": keys}), ("k",)) is expected


def test_a_strictly_ordered_second_key_column_proves_the_pairs_distinct():
    batch = _batch({"a": [1, 1, 1], "b": [1, 2, 3]})
    assert _has_duplicate_keys(batch, ("a", "b")) is False
    assert _has_duplicate_keys(_batch({"a": [1, 1, 1], "b": [1, 2, 1]}), ("a", "b")) is True


def test_a_key_type_without_a_hash_kernel_leaves_the_answer_to_the_row_path():
    batch = from_arrow(pa.table({"k": pa.array([[1], [2]], pa.list_(pa.int64()))}))
    assert _has_duplicate_keys(batch, ("k",)) is True
