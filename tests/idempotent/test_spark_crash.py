"""kill -9 of a Spark writer while its job writes the new partitions (before Spark's commit
renames them into place): the table keeps its previous rows, whole, and other intervals too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dagguard.idempotent import write_interval
from tests.idempotent.helpers import DAY1, DAY2, UTC, at, events

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]


def test_a_writer_killed_while_writing_leaves_the_previous_rows_whole(spark, tmp_path):
    location = tmp_path / "events"
    spark.sql("DROP TABLE IF EXISTS crash_events")
    spark.sql(f"CREATE TABLE crash_events (k INT, v STRING, ts TIMESTAMP) USING parquet PARTITIONED BY (ts) "
              f"LOCATION '{location}'")
    before = events((1, at(1, 1), "old"), (2, at(1, 5), "old"))
    write_interval(spark, "crash_events", before, DAY1, time_column="ts")
    write_interval(spark, "crash_events", events((9, at(2, 3), "other")), DAY2, time_column="ts")
    writer = subprocess.Popen([sys.executable, str(Path(__file__).parent / "spark_writer_process.py"),
                               str(location), str(tmp_path / "writer-warehouse")],
                              cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        assert writer.stdout.readline().strip() == "WRITING"
        deadline = time.monotonic() + 300
        # Dynamic partition overwrite writes into a staging folder, renamed into place at commit.
        while not any(location.glob(".spark-staging-*")):
            assert writer.poll() is None and time.monotonic() < deadline, "the writer ended before writing"
            time.sleep(0.05)
    finally:
        os.killpg(writer.pid, signal.SIGKILL)  # the writer and its JVM
        writer.wait()
    spark.catalog.refreshTable("crash_events")
    rows = sorted((r.k, r.ts.replace(tzinfo=UTC), r.v) for r in spark.table("crash_events").collect())
    assert rows == [(1, at(1, 1), "old"), (2, at(1, 5), "old"), (9, at(2, 3), "other")]
    spark.sql("DROP TABLE crash_events")
