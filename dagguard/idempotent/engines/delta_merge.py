"""A Delta merge of a batch that has every column, planned in Arrow and written as one predicate
overwrite of the interval (the same commit as replace): the batch, plus the interval's rows
whose key it lacks (none with delete_missing).

Each batch row is matched with the interval's row of the same key by position: directly when the
interval holds the batch's keys in the batch's order (a rerun of the same extract, as the table
returns the rows it was given), else by a hash join on the key. Matched rows are then compared
value by value, exactly, which gives the updated count and tells a merge that would change
nothing (no commit then). delta-rs 1.6's own MERGE, with the condition that only differing rows
count as updated, took 33 s for 1M rows of which a tenth differed; this plan reads the interval
and compares in about 0.1-0.3 s, plus the overwrite.
"""

from __future__ import annotations

from typing import Any

from dagguard.idempotent.engines.delta_query import select_rows

# Columns the hash join carries: each side's row position.
_ROW, _AT = "__dagguard_row", "__dagguard_at"


def merge_in_arrow(delta_table: Any, spec: Any, data: Any, where: str, commit: Any) -> dict[str, int] | None:
    """Merge `data` (the batch as the table stores it, every column) into the rows `where`
    selects, in one overwrite commit; the counts. None where Arrow cannot plan it (a NULL key,
    which only IS NOT DISTINCT FROM matches; a key the interval holds twice, whose rows MERGE
    updates both; a type Arrow cannot join or compare; no numpy): the caller then runs
    delta-rs's MERGE."""
    try:
        import numpy as np
    except ImportError:
        return None
    import pyarrow as pa
    from deltalake import write_deltalake

    keys = list(spec.unique_key)
    if any(data.column(k).null_count for k in keys):
        return None
    current = select_rows(delta_table, data.column_names, where, data.schema)
    try:
        at, in_order = _positions(data, current, keys)
        differs = None if at is None else _differs(data, current, at, in_order,
                                                   [c for c in data.column_names if c not in keys])
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if differs is None:
        return None
    matched = at >= 0
    found = int(matched.sum())
    updated, inserted, missing = int(differs.sum()), len(data) - found, len(current) - found
    if not (updated or inserted or (spec.delete_missing and missing)):
        return {"inserted": 0, "updated": 0, "deleted": 0}  # the merge would change nothing
    rows = data
    if missing and not spec.delete_missing:
        kept = np.ones(len(current), dtype=bool)
        kept[at[matched]] = False
        rows = pa.concat_tables([data, current.filter(pa.array(kept))])
    write_deltalake(delta_table, rows, mode="overwrite", predicate=where, commit_properties=commit)
    return {"inserted": inserted, "updated": updated, "deleted": missing if spec.delete_missing else 0}


def _positions(data: Any, current: Any, keys: list[str]) -> tuple[Any, bool]:
    """For each batch row, the position of the interval's row with its key, -1 where there is
    none (None when a key of the batch is held more than once by the interval); and whether the
    interval holds exactly the batch's keys in its order."""
    import numpy as np
    import pyarrow as pa

    rows = len(data)
    if not len(current):
        return np.full(rows, -1, dtype=np.int64), False
    if len(current) == rows and all(current.column(k).equals(data.column(k)) for k in keys):
        return np.arange(rows), True  # the same keys in the same order: the batch's keys are unique
    joined = data.select(keys).append_column(_ROW, pa.array(np.arange(rows, dtype=np.int64))).join(
        current.select(keys).append_column(_AT, pa.array(np.arange(len(current), dtype=np.int64))),
        keys=keys, join_type="inner")
    ours = joined.column(_ROW).to_numpy()
    if len(ours) and np.bincount(ours, minlength=rows).max() > 1:
        return None, False  # a key the interval holds more than once
    at = np.full(rows, -1, dtype=np.int64)
    at[ours] = joined.column(_AT).to_numpy()
    return at, False


def _differs(data: Any, current: Any, at: Any, in_order: bool, values: list[str]) -> Any:
    """For each matched batch row, whether any value differs from its interval row's (NULL
    equal to NULL; floats compared as the bits stored, so NaN equals NaN and -0.0 differs
    from 0.0): a boolean numpy array over the rows where `at` >= 0."""
    import numpy as np
    import pyarrow as pa

    matched = at >= 0
    every = bool(matched.all())
    if not (every or matched.any()):
        return np.zeros(0, dtype=bool)  # an empty interval, or none of its keys in the batch
    if in_order:
        ours, theirs = data, current
    else:
        ours = data if every else data.filter(pa.array(matched))
        theirs = current.take(pa.array(at[matched]))
    differs = np.zeros(len(ours), dtype=bool)
    for name in values:
        differs |= ~_same(ours.column(name), theirs.column(name))
    return differs


def _same(ours: Any, theirs: Any) -> Any:
    """Row by row, do two columns of one type hold the same value (NULL equal to NULL)?"""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_floating(ours.type):
        width = f"u{ours.type.bit_width // 8}"
        equal = (pc.fill_null(ours, 0).to_numpy().view(width) == pc.fill_null(theirs, 0).to_numpy().view(width))
    else:
        equal = pc.fill_null(pc.equal(ours, theirs), False).to_numpy(zero_copy_only=False)
    if not (ours.null_count or theirs.null_count):
        return equal
    ours_null = ours.is_null().to_numpy(zero_copy_only=False)
    theirs_null = theirs.is_null().to_numpy(zero_copy_only=False)
    return np.where(ours_null | theirs_null, ours_null & theirs_null, equal)
