"""A failure after any statement, or a writer killed before commit, leaves the table as it was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dagguard.idempotent.checksum import batch_checksum
from dagguard.idempotent.engines import engine_for
from dagguard.idempotent.ledger import RunInfo
from dagguard.idempotent.write import WriteSpec, prepare_batch, write_batch, write_interval
from tests.idempotent.helpers import DAY1, DAY2, at, events

WRITER = Path(__file__).with_name("writer_process.py")
REPO = Path(__file__).resolve().parents[2]


class InjectedFailure(RuntimeError):
    pass


def _seed(db) -> list:
    db.create()
    conn = db.connect()
    try:
        write_interval(conn, "events", events((1, at(1, 1), "old"), (2, at(1, 2), "old")), DAY1,
                       time_column="ts")
        write_interval(conn, "events", events((7, at(2, 1), "day2")), DAY2, time_column="ts")
    finally:
        conn.close()
    return db.rows()


def _skip_without_statements(db) -> None:
    if db.dialect == "delta":
        pytest.skip("delta-rs writes a version's files and commits them in one call, so there is no statement "
                    "to fail after; test_delta_writes.py kills writers at random points of that call instead")


def _ledger_count(db) -> int:
    return len(db.rows("dagguard_write_log", "checksum"))


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_failure_after_each_statement_rolls_back(db, strategy):
    _skip_without_statements(db)
    before = _seed(db)
    ledger_before = _ledger_count(db)
    spec = WriteSpec.build("events", strategy, "ts", ["k"], strategy == "merge", "ds")
    batch = prepare_batch(spec, events((2, at(1, 2), "new"), (3, at(1, 3), "new")), None, DAY1)
    failures = 0
    # Fail after statement 0, then 1, ...: each failed write must leave no trace. The first
    # number past the last statement lets the write finish: that is the rerun.
    for fail_at in range(20):
        conn = db.connect()

        def fail(number: int, sql: str, fail_at: int = fail_at) -> None:
            if number == fail_at:
                raise InjectedFailure(f"after statement {number}: {sql[:40]}")

        try:
            write_batch(engine_for(conn), spec, batch, DAY1, batch_checksum(batch), RunInfo(), fail)
        except InjectedFailure:
            failures += 1
            assert db.rows() == before, f"failure after statement {fail_at} changed the table"
            assert _ledger_count(db) == ledger_before
            continue
        finally:
            conn.close()
        break
    assert failures >= 2
    assert _ledger_count(db) == ledger_before + 1
    # merge runs with delete_missing, so k=1 goes in both strategies.
    assert db.rows() == [(2, at(1, 2), "new"), (3, at(1, 3), "new"), (7, at(2, 1), "day2")]


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_writer_killed_before_commit_leaves_the_table_as_before(db, strategy):
    _skip_without_statements(db)
    before = _seed(db)
    ledger_before = _ledger_count(db)
    killed = subprocess.run([sys.executable, str(WRITER), db.url, strategy, "kill-after-first-write", "0"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -9, killed.stderr
    assert db.rows() == before
    assert _ledger_count(db) == ledger_before
    rerun = subprocess.run([sys.executable, str(WRITER), db.url, strategy, "normal", "0"],
                           cwd=REPO, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    day1 = [row for row in db.rows() if row[1] < DAY2.start]
    assert day1 == [(k, at(1, k), f"new-{k}") for k in range(1, 6)]
    assert [row for row in db.rows() if row[1] >= DAY2.start] == [(7, at(2, 1), "day2")]
