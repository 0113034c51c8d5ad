"""iceberg_rows.plan_merge against a plain Python merge, on batches handed over in the stored
order (no take: the batch and the stored rows used whole), shuffled, with stored duplicate and
NULL keys, with columns the batch lacks, and with delete_missing."""

from __future__ import annotations

import random

import pytest

pa = pytest.importorskip("pyarrow")

from dagguard.idempotent.engines.iceberg_rows import plan_merge  # noqa: E402

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string()), ("n", pa.float64())])


def _python_merge(stored, batch, columns, delete_missing):
    """(rows after the merge as a sorted list, inserted, updated, deleted), NULL keys matching."""
    out, inserted, updated, matched_stored = [], 0, 0, set()
    for row in batch:
        matches = [i for i, old in enumerate(stored) if old["k"] == row["k"]]
        if not matches:
            inserted += 1
            out.append({name: row[name] if name in columns else None for name in SCHEMA.names})
        for i in matches:
            matched_stored.add(i)
            merged = {name: row[name] if name in columns else stored[i][name] for name in SCHEMA.names}
            updated += any(merged[name] != stored[i][name] for name in columns if name != "k")
            out.append(merged)
    missing = [old for i, old in enumerate(stored) if i not in matched_stored]
    if not delete_missing:
        out += missing
    return sorted(out, key=repr), inserted, updated, len(missing) if delete_missing else 0


def _table(rows, columns=SCHEMA.names):
    return pa.Table.from_pylist([{c: r[c] for c in columns} for r in rows],
                                schema=pa.schema([SCHEMA.field(c) for c in columns]))


@pytest.mark.parametrize("seed", range(40))
def test_plan_merge_is_the_python_merge(seed):
    rand = random.Random(seed)
    keys = list(range(12)) + ([None] if seed % 4 == 0 else [])
    stored_keys = rand.sample(keys, rand.randint(1, len(keys)))
    if seed % 5 == 0:  # a key the interval holds twice (another writer's rows)
        stored_keys.append(stored_keys[0])
    stored = [{"k": k, "v": f"s{k}", "n": float(rand.randint(0, 3))} for k in sorted(stored_keys, key=repr)]
    batch_keys = rand.sample(keys, rand.randint(1, len(keys)))
    batch_keys = sorted(batch_keys, key=repr) if seed % 2 else batch_keys  # in stored order, or not
    batch = [{"k": k, "v": rand.choice([f"s{k}", f"b{k}"]), "n": float(rand.randint(0, 3))} for k in batch_keys]
    columns = ("k", "v") if seed % 3 == 0 else tuple(SCHEMA.names)
    delete_missing = seed % 7 == 0
    want = _python_merge(stored, batch, columns, delete_missing)
    typed = _table(batch).select(list(columns)) if len(columns) < 3 else _table(batch)
    if len(columns) < 3:  # the batch typed as the table: the missing column NULL, as as_table does
        typed = typed.append_column("n", pa.nulls(len(batch), pa.float64()))
    plan = plan_merge(_table(stored), typed, columns, ("k",), delete_missing)
    got_rows = sorted(plan.rows.to_pylist(), key=repr) if plan.rows is not None else None
    if want[1:] == (0, 0, 0):
        assert plan.rows is None and (plan.inserted, plan.updated, plan.deleted) == (0, 0, 0)
    else:
        assert (got_rows, plan.inserted, plan.updated, plan.deleted) == want


def test_a_batch_in_the_stored_order_is_merged_without_reordering():
    stored = _table([{"k": k, "v": "old", "n": 1.0} for k in range(5)])
    batch = _table([{"k": k, "v": "new" if k % 2 else "old", "n": 1.0} for k in range(6)])
    plan = plan_merge(stored, batch, tuple(SCHEMA.names), ("k",), False)
    assert (plan.inserted, plan.updated, plan.deleted) == (1, 2, 0)
    assert plan.rows.to_pylist() == batch.to_pylist()  # the batch itself, in its order


@pytest.mark.parametrize("columns", [tuple(SCHEMA.names), ("k", "v")])
def test_a_batch_led_by_the_stored_keys_is_merged_by_position(columns):
    """The batch's first rows carry the stored keys in the stored order (a NULL key among them),
    new keys after them: no join, and the result is the Python merge's (a column the batch lacks
    kept on matched rows, NULL on new ones)."""
    stored_rows = [{"k": k, "v": f"s{k}", "n": float(i)} for i, k in enumerate([None, 3, 1, 2])]
    batch_rows = [{"k": k, "v": f"s{k}" if k != 1 else "changed", "n": 9.0} for k in [None, 3, 1, 2, 7, 8]]
    typed = _table(batch_rows)
    if columns == ("k", "v"):
        typed = typed.set_column(2, "n", pa.nulls(len(batch_rows), pa.float64()))
    stored = pa.concat_tables([_table(stored_rows[:2]), _table(stored_rows[2:])])  # two chunks
    want = _python_merge(stored_rows, batch_rows, columns, False)
    plan = plan_merge(stored, typed, columns, ("k",), False)
    assert (sorted(plan.rows.to_pylist(), key=repr), plan.inserted, plan.updated, plan.deleted) == want
    assert plan.rows.column("k").to_pylist() == [None, 3, 1, 2, 7, 8]  # matched in place, then new


def test_a_batch_in_the_stored_order_without_changes_plans_nothing():
    stored = _table([{"k": k, "v": "same", "n": 1.0} for k in range(5)])
    plan = plan_merge(stored, _table(stored.to_pylist()), tuple(SCHEMA.names), ("k",), True)
    assert plan.rows is None and not plan.changes
