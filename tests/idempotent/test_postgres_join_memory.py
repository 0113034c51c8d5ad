"""A PostgreSQL merge raises work_mem for its own transaction only, and never lowers it."""

from __future__ import annotations

import pytest

from dagguard.idempotent.checksum import batch_checksum
from dagguard.idempotent.engines import engine_for
from dagguard.idempotent.ledger import RunInfo
from dagguard.idempotent.write import WriteSpec, prepare_batch, write_batch
from tests.idempotent.helpers import DAY1, at, make_database


@pytest.fixture
def pg(request, tmp_path):
    db = make_database("postgres", request, tmp_path)
    db.create()
    return db


def _work_mem_during_merge(conn, rows: int) -> set[str]:
    """work_mem as the merge's statements saw it, read on the write's own connection, when
    the merge changes every row of an interval that holds them (into an empty interval a
    merge only inserts, and joins nothing)."""
    seen: set[str] = set()

    def observe(_number: int, _sql: str) -> None:
        with conn.cursor() as cursor:
            seen.add(cursor.execute("SHOW work_mem").fetchone()[0])

    spec = WriteSpec.build("events", "merge", "ts", ["k"], False, "ds")
    for value, observer in (("a", None), ("b", observe)):
        batch = prepare_batch(spec, [{"k": k, "ts": at(1, 1), "v": value} for k in range(rows)], None, DAY1)
        write_batch(engine_for(conn), spec, batch, DAY1, batch_checksum(batch), RunInfo(), observer)
    return seen


def _show(conn) -> str:
    """work_mem outside any transaction (SHOW opens one on a non-autocommit connection: a
    write would then run as a savepoint in it, and a local setting last until it ends)."""
    with conn.cursor() as cursor:
        value = cursor.execute("SHOW work_mem").fetchone()[0]
    conn.commit()
    return value


def test_merge_raises_work_mem_for_its_transaction_only(pg):
    conn = pg.connect()
    try:
        before = _show(conn)
        assert before == "4MB"  # the server default the spill came from
        during = _work_mem_during_merge(conn, 100_000)
        # 100,000 rows x 64 bytes = 6,250 kB: above the default, so raised.
        assert during == {"6250kB"}
        assert _show(conn) == before
    finally:
        conn.close()


def test_merge_keeps_a_larger_session_work_mem(pg):
    conn = pg.connect()
    try:
        with conn.cursor() as cursor:
            cursor.execute("SET work_mem = '1GB'")
        conn.commit()
        assert _work_mem_during_merge(conn, 100_000) == {"1GB"}
        assert _show(conn) == "1GB"
    finally:
        conn.close()


def test_a_small_merge_leaves_the_default(pg):
    conn = pg.connect()
    try:
        assert _work_mem_during_merge(conn, 3) == {"4MB"}
    finally:
        conn.close()
