"""End to end on Airflow 3.3 with Delta tables: @idempotent_write and IntervalMergeOperator with a
delta:// conn (no Airflow connection), the DAG run twice for one logical date with dag.test()."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

pytest.importorskip("airflow.sdk")
deltalake = pytest.importorskip("deltalake")
pa = pytest.importorskip("pyarrow")

from dagguard.idempotent import read_ledger  # noqa: E402

DAG_FILE = Path(__file__).parent / "airflow_dags" / "dag_lake.py"
REPO = Path(__file__).resolve().parents[2]
UTC = timezone.utc

pytestmark = pytest.mark.airflow


def _table(lake: Path, name: str, schema: pa.Schema, rows: list[dict] | None = None) -> None:
    deltalake.DeltaTable.create(str(lake / name), schema=schema)
    if rows:
        deltalake.write_deltalake(str(lake / name), pa.Table.from_pylist(rows, schema=schema), mode="append")


def test_a_dag_run_twice_writes_each_delta_interval_once(tmp_path):
    lake, home = tmp_path / "lake", tmp_path / "home"
    lake.mkdir()
    ts = pa.timestamp("us", tz="UTC")
    _table(lake, "signups", pa.schema([("user_id", pa.int64()), ("signed_up_at", ts), ("plan", pa.string())]))
    orders = pa.schema([("order_id", pa.int64()), ("created_at", ts), ("amount", pa.float64())])
    _table(lake, "orders", orders)
    _table(lake, "raw_orders", orders, [
        {"order_id": 1, "created_at": datetime(2026, 1, 4, 10, tzinfo=UTC), "amount": 5.0},
        {"order_id": 2, "created_at": datetime(2026, 1, 4, 23, 59, 59, 999999, tzinfo=UTC), "amount": 7.5},
        {"order_id": 3, "created_at": datetime(2026, 1, 5, tzinfo=UTC), "amount": 1.0}])
    env = {key: value for key, value in os.environ.items() if not key.startswith("AIRFLOW")}
    env.update({"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__CORE__DAGS_FOLDER": str(DAG_FILE.parent),
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{tmp_path / 'airflow.db'}",
                "DAGGUARD_LAKE": str(lake), "PYTHONPATH": str(REPO)})
    result = subprocess.run([sys.executable, str(DAG_FILE)], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0 and output.count("STATE success") == 2, output[-4000:]
    signups = deltalake.DeltaTable(str(lake / "signups"))
    assert sorted((r["user_id"], r["signed_up_at"].hour, r["plan"]) for r in signups.to_pyarrow_table().to_pylist()) \
        == [(0, 0, "pro-2026-01-05"), (1, 1, "pro-2026-01-05"), (2, 2, "pro-2026-01-05")]
    assert signups.version() == 1  # the second run changed nothing: no new version
    loaded = deltalake.DeltaTable(str(lake / "orders")).to_pyarrow_table().to_pylist()
    assert sorted(r["order_id"] for r in loaded) == [1, 2]
    entries = read_ledger(f"delta://{lake}").entries
    assert sorted((e.table_name, e.task_id, e.rows_inserted) for e in entries) == [
        ("orders", "load_orders", 0), ("orders", "load_orders", 2),
        ("signups", "export_signups", 0), ("signups", "export_signups", 3)]
    assert {e.dag_id for e in entries} == {"lake_daily"}
