"""Version detection picks MERGE or the fallback statements; both give the same table."""

from __future__ import annotations

import dataclasses

import pytest

from dagguard.idempotent.capabilities import features_for
from dagguard.idempotent.checksum import batch_checksum
from dagguard.idempotent.engines import engine_for
from dagguard.idempotent.ledger import RunInfo
from dagguard.idempotent.write import WriteSpec, prepare_batch, write_batch
from tests.idempotent.helpers import DAY1, at, events


@pytest.mark.parametrize("dialect, version, merge, by_source", [
    ("postgres", (14, 11), False, False),
    ("postgres", (15, 8), True, False),
    ("postgres", (16, 4), True, False),
    ("postgres", (17, 0), True, True),
    ("duckdb", (1, 3, 2), False, False),
    ("duckdb", (1, 4, 0), True, True),
    ("duckdb", (2, 0, 1), True, True),
    ("sqlite", (3, 46, 0), False, False),
])
def test_feature_table(dialect, version, merge, by_source):
    features = features_for(dialect, version)
    assert (features.merge, features.merge_by_source) == (merge, by_source)


NO_SQL = "Delta Lake writes through delta-rs's merge, not SQL statements chosen by version"


def _merge_statements(db, force_fallback: bool) -> list[str]:
    if db.dialect == "delta":
        pytest.skip(NO_SQL)
    db.create()
    seen: list[str] = []
    spec = WriteSpec.build("events", "merge", "ts", ["k"], True, "ds")
    for rows in (events((1, at(1, 1), "a"), (2, at(1, 2), "b")),
                 events((2, at(1, 2), "B"), (3, at(1, 3), "c"))):
        conn = db.connect()
        engine = engine_for(conn)
        if force_fallback:
            engine.features = dataclasses.replace(engine.features, merge=False, merge_by_source=False)
        batch = prepare_batch(spec, rows, None, DAY1)
        result = write_batch(engine, spec, batch, DAY1, batch_checksum(batch), RunInfo(),
                             lambda n, sql: seen.append(sql))
        conn.close()
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, 1, 1)
    assert db.rows() == [(2, at(1, 2), "B"), (3, at(1, 3), "c")]
    return seen


def test_detected_version_chooses_the_statements(db):
    if db.dialect == "iceberg":
        pytest.skip("SQL-specific: Iceberg runs no SQL statements to choose between")
    if db.dialect == "delta":
        pytest.skip(NO_SQL)
    conn = db.connect()
    engine = engine_for(conn)
    conn.close()
    statements = _merge_statements(db, force_fallback=False)
    merges = [s for s in statements if s.startswith("MERGE")]
    if db.dialect == "postgres":
        assert engine.version[0] == 15  # the Debian server the tests start
        # PostgreSQL 15 has MERGE but not WHEN NOT MATCHED BY SOURCE: DELETE ... NOT EXISTS.
        assert merges and not any("BY SOURCE" in s for s in merges)
        assert any(s.startswith("DELETE") and "NOT EXISTS" in s for s in statements)
    elif db.dialect == "duckdb":
        assert merges and all("WHEN NOT MATCHED BY SOURCE" in s for s in merges)
        assert not any(s.startswith("DELETE") for s in statements)
    else:
        assert not merges
        assert any(s.startswith("UPDATE") and " FROM " in s for s in statements)


def test_fallback_without_merge_gives_the_same_result(db):
    if db.dialect == "iceberg":
        pytest.skip("SQL-specific: Iceberg runs no SQL statements to choose between")
    statements = _merge_statements(db, force_fallback=True)
    assert not any(s.startswith("MERGE") for s in statements)
