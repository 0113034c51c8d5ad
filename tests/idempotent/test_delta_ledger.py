"""A Delta write reads its ledger and appends its row through one handle opened before the
commit, on real delta-rs: the row still lands over appends made since, an older ledger without
the partition_key column gains it and keeps its rows, and a rerun of an older ledger's write
is recognised."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

deltalake = pytest.importorskip("deltalake")
pa = pytest.importorskip("pyarrow")

from dagguard.idempotent import DeltaLake, read_ledger, write_interval  # noqa: E402
from dagguard.idempotent.engines import delta_ledger  # noqa: E402
from dagguard.idempotent.engines.delta import DeltaEngine  # noqa: E402
from dagguard.idempotent.identifiers import TableName  # noqa: E402
from dagguard.idempotent.ledger import LEDGER_COLUMNS, RunInfo  # noqa: E402
from tests.idempotent.helpers import DAY1, DAY2, at, events  # noqa: E402

SCHEMA = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")), ("v", pa.string())])


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    deltalake.DeltaTable.create(str(tmp_path / "events"), schema=SCHEMA)
    return tmp_path


def _ledger_uri(lake: Path) -> str:
    return delta_ledger.ledger_uri(DeltaEngine(DeltaLake(str(lake))), TableName.parse("events"))


def test_a_row_appended_by_another_writer_since_the_ledger_was_read_is_kept_beside_ours(lake, monkeypatch):
    write_interval(f"delta://{lake}", "events", events((1, at(2, 1), "b")), DAY2, time_column="ts")
    real = delta_ledger.last_write

    def and_meanwhile(engine, table, interval, ledger=None):
        found = real(engine, table, interval, ledger)
        # Another task's row lands after this write read the ledger, before it appends.
        delta_ledger.record_write(engine, RunInfo(dag_id="other"), table, DAY2, "replace", (1, 0, 0, 0), "x")
        return found

    monkeypatch.setattr(delta_ledger, "last_write", and_meanwhile)
    ours = write_interval(f"delta://{lake}", "events", events((1, at(1, 1), "a")), DAY1, time_column="ts",
                          run=RunInfo(dag_id="ours"))
    entries = read_ledger(f"delta://{lake}").entries
    assert [(e.dag_id, e.interval_start[:10]) for e in entries] == [
        (None, "2026-01-02"), ("other", "2026-01-02"), ("ours", "2026-01-01")]
    assert entries[-1].checksum == ours.checksum and entries[-1].rows_inserted == 1


def test_a_ledger_from_before_partition_keys_gains_the_column_and_its_rerun_is_recognised(lake):
    first = write_interval(f"delta://{lake}", "events", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    # The same ledger as an older dagguard wrote it: the row of that write, no partition_key column.
    old = pa.schema([pa.field(f.name, f.type) for f in delta_ledger._schema() if f.name in LEDGER_COLUMNS])
    row = dict(zip(LEDGER_COLUMNS, ("d", "t", "r", 1, "events", DAY1.start, DAY1.end, "replace", 1, 1, 0, 0,
                                    first.checksum, datetime.now(timezone.utc))))
    deltalake.write_deltalake(_ledger_uri(lake), pa.Table.from_pylist([row], schema=old), mode="overwrite",
                              schema_mode="overwrite")
    assert "partition_key" not in deltalake.DeltaTable(_ledger_uri(lake)).schema().to_arrow().names
    version = deltalake.DeltaTable(str(lake / "events")).version()
    again = write_interval(f"delta://{lake}", "events", events((1, at(1, 1), "a")), DAY1, time_column="ts",
                           run=RunInfo(dag_id="again"))
    assert (again.rows_inserted, again.rows_deleted) == (0, 0)
    assert deltalake.DeltaTable(str(lake / "events")).version() == version  # recognised: no commit
    assert "partition_key" in deltalake.DeltaTable(_ledger_uri(lake)).schema().to_arrow().names
    entries = read_ledger(f"delta://{lake}").entries
    assert [(e.dag_id, e.partition_key, e.checksum) for e in entries] == [
        ("d", None, first.checksum), ("again", None, first.checksum)]
