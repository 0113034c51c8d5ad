"""The write ledger and `dagguard ledger --conn URL`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from dagguard.cli import app
from dagguard.idempotent import RunInfo, read_ledger, write_interval
from tests.idempotent.helpers import DAY1, DAY2, at, events


def _write(db, rows, interval=DAY1, run=None):
    conn = db.connect()
    try:
        return write_interval(conn, "events", rows, interval, time_column="ts", run=run)
    finally:
        conn.close()


def _cli(*args: str):
    return CliRunner().invoke(app, ["ledger", *args])


def test_each_write_is_recorded_in_its_transaction(db):
    db.create()
    run = RunInfo(dag_id="orders", task_id="load", run_id="scheduled__2026-01-01", try_number=2)
    _write(db, events((1, at(1, 1), "a"), (2, at(1, 2), "b")), run=run)
    _write(db, events((3, at(2, 1), "c")), interval=DAY2)
    report = read_ledger(db.url)
    assert [(e.table_name, e.interval_start, e.row_count, e.strategy) for e in report.entries] == [
        ("events", "2026-01-01T00:00:00+00:00", 2, "replace"),
        ("events", "2026-01-02T00:00:00+00:00", 1, "replace")]
    first = report.entries[0]
    assert (first.dag_id, first.task_id, first.run_id, first.try_number) == (
        "orders", "load", "scheduled__2026-01-01", 2)
    assert report.conflicts == ()


def test_same_rows_in_another_order_have_the_same_checksum(db):
    db.create()
    rows = events((1, at(1, 1), "a"), (2, at(1, 2), "b"))
    first = _write(db, rows)
    second = _write(db, list(reversed(rows)))
    assert first.checksum == second.checksum
    assert read_ledger(db.url).conflicts == ()


def test_cli_exit_0_when_reruns_wrote_the_same_rows(db):
    db.create()
    _write(db, events((1, at(1, 1), "a")))
    _write(db, events((1, at(1, 1), "a")))
    result = _cli("--conn", db.url)
    assert result.exit_code == 0, result.output
    assert "2 write(s) of 1 interval(s), 0 interval(s) with different checksums" in result.stdout


def test_cli_exit_1_flags_an_interval_written_with_different_rows(db):
    db.create()
    _write(db, events((1, at(1, 1), "a")))
    _write(db, events((1, at(1, 1), "changed")))
    _write(db, events((5, at(2, 1), "x")), interval=DAY2)
    result = _cli("--conn", db.url)
    assert result.exit_code == 1, result.output
    assert ("events [2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z) was written 2 times with "
            "2 different checksums") in result.stdout
    as_json = json.loads(_cli("--conn", db.url, "--format", "json").stdout)
    assert len(as_json["entries"]) == 3 and len(as_json["conflicts"]) == 1
    assert _cli("--conn", db.url, "--table", "other").stdout.startswith("0 write(s)")


@pytest.mark.parametrize("url, message", [
    ("sqlite:////nonexistent/dir/x.db", "cannot connect to sqlite:////nonexistent/dir/x.db"),
    ("mysql://db/x", "unsupported database URL scheme 'mysql'"),
    ("not-a-url", "is not a database URL"),
    ("postgresql://nobody@127.0.0.1:1/x", "cannot connect to postgresql://nobody@127.0.0.1:1/x"),
    ("iceberg+sqlite:////nonexistent/dir/x.db", "no Iceberg SQL catalog at '/nonexistent/dir/x.db'"),
])
def test_cli_exit_2_with_one_line_on_connection_errors(url, message):
    result = _cli("--conn", url)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert result.stderr.startswith("dagguard: error: ")


def test_cli_exit_2_when_the_database_has_no_ledger(db):
    db.create()
    result = _cli("--conn", db.url)
    assert result.exit_code == 2
    assert "no dagguard_write_log table" in result.stderr


def test_cli_rejects_an_unknown_format(db):
    result = _cli("--conn", db.url, "--format", "xml")
    assert result.exit_code == 2 and "--format must be one of text, json" in result.stderr


def test_password_is_not_echoed():
    result = _cli("--conn", "postgresql://u:secret@127.0.0.1:1/x")
    assert result.exit_code == 2 and "secret" not in result.stderr


def test_checksum_is_the_same_for_one_instant_in_any_zone_or_class():
    from datetime import datetime, timedelta, timezone

    import pendulum

    from dagguard.idempotent.batch import Batch
    from dagguard.idempotent.checksum import batch_checksum

    instants = [pendulum.datetime(2026, 1, 1, 5), datetime(2026, 1, 1, 5, tzinfo=timezone.utc),
                datetime(2026, 1, 1, 6, tzinfo=timezone(timedelta(hours=1)))]
    sums = {batch_checksum(Batch(("k", "ts"), ((1, ts), (2, instants[0])))) for ts in instants}
    assert len(sums) == 1
    assert batch_checksum(Batch(("ts", "k"), ((instants[1], 1), (instants[0], 2)))) in sums
    assert batch_checksum(Batch(("k", "ts"), ((1, instants[0]),))) not in sums
