"""PostgreSQL column types that need more than `=` and psycopg's default dumpers."""

from __future__ import annotations

import pytest

from dagguard.idempotent import write_interval
from tests.idempotent.helpers import DAY1, at, make_database

pytestmark = pytest.mark.postgres


def merge(db, rows):
    conn = db.connect()
    try:
        result = write_interval(conn, "events", rows, DAY1, time_column="ts", strategy="merge", unique_key=["k"])
    finally:
        conn.close()
    return result.rows_inserted, result.rows_updated, result.rows_deleted


@pytest.mark.parametrize(("kind", "value", "other"), [
    ("json", '{"a": 1}', '{"a": 2}'),
    ("json[]", ['{"a": 1}'], ['{"a": 2}']),
    ("xml", "<a>1</a>", "<a>2</a>"),
    ("point", "(1,2)", "(2,1)"),
    # box's = compares areas: these two are equal by it, and different boxes.
    ("box", "(0,0),(1,2)", "(0,0),(2,1)"),
])
def test_merge_finds_changed_rows_in_columns_without_value_equality(request, tmp_path, kind, value, other):
    """Regression: the MERGE compared every column with IS DISTINCT FROM, which needs an `=`
    (json, xml and point have none: the write failed) that compares values (box's compares
    areas: a changed box would have counted as unchanged)."""
    db = make_database("postgres", request, tmp_path)
    db.create("events", f"k bigint, ts timestamptz, v {kind}")
    assert merge(db, [{"k": 1, "ts": at(1, 1), "v": value}, {"k": 2, "ts": at(1, 2), "v": value}]) == (2, 0, 0)
    assert merge(db, [{"k": 1, "ts": at(1, 1), "v": value}, {"k": 2, "ts": at(1, 2), "v": other}]) == (0, 1, 0)
    assert merge(db, [{"k": 1, "ts": at(1, 1), "v": value}, {"k": 2, "ts": at(1, 2), "v": other}]) == (0, 0, 0)
    assert [str(v) for (v,) in db.rows("events", "v::text")] == [
        str(db_text(db, kind, value)), str(db_text(db, kind, other))]


def db_text(db, kind: str, value) -> str:
    """How PostgreSQL prints `value` of type `kind`."""
    conn = db.connect()
    try:
        return conn.execute(f"SELECT %s::{kind}::text", (value,)).fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_dicts_and_lists_go_into_json_columns_and_lists_into_arrays(request, tmp_path, strategy):
    """Regression: psycopg has no dumper for a plain dict, so a dict for a jsonb column failed
    with `cannot adapt type 'dict'`; a list would have gone as a PostgreSQL array."""
    db = make_database("postgres", request, tmp_path)
    db.create("events", "k bigint, ts timestamptz, doc jsonb, raw json, tags text[]")
    rows = [{"k": 1, "ts": at(1, 1), "doc": {"a": [1, 2]}, "raw": [1, {"b": None}], "tags": ["x", "y"]},
            {"k": 2, "ts": at(1, 2), "doc": None, "raw": '{"already": "text"}', "tags": []}]
    keys = {"unique_key": ["k"]} if strategy == "merge" else {}
    conn = db.connect()
    try:
        for _ in range(2):  # the rerun compares, or rewrites, the same values
            write_interval(conn, "events", rows, DAY1, time_column="ts", strategy=strategy, **keys)
        stored = conn.execute("SELECT k, doc, raw::text, tags FROM events ORDER BY k").fetchall()
    finally:
        conn.close()
    assert stored == [(1, {"a": [1, 2]}, '[1, {"b": null}]', ["x", "y"]),
                      (2, None, '{"already": "text"}', [])]
