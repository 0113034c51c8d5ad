"""DG201 on lakehouse writes from Python: delta-rs's write_deltalake(..., mode="append") adds the
rows again on every re-run; its other modes, and writes through dagguard.idempotent, do not."""

from __future__ import annotations

import pytest

from tests.lint_helpers import lint

TASK = """\
import deltalake
from deltalake import write_deltalake
from deltalake import write_deltalake as wd
from airflow.sdk import DAG, task
from dagguard.idempotent import write_interval

with DAG("d", schedule="@daily"):
    @task
    def store():
        rows = fetch()
        {statement}

    store()
"""
APPENDS = {
    "imported": 'write_deltalake("s3://lake/orders", rows, mode="append")',
    "module": 'deltalake.write_deltalake("s3://lake/orders", rows, mode="append")',
    "aliased": 'wd("s3://lake/orders", rows, mode="append")',
}
NOT_APPENDS = {
    "overwrite": 'write_deltalake("s3://lake/orders", rows, mode="overwrite")',
    "default_refuses_a_rerun": 'write_deltalake("s3://lake/orders", rows)',
    "mode_unknown": 'write_deltalake("s3://lake/orders", rows, mode=MODE)',
    "through_dagguard": 'write_interval("delta+s3://lake", "orders", rows, interval, time_column="ts")',
}


def _dg201(tmp_path, statement: str) -> list[str]:
    return [f.message for f in lint(tmp_path, TASK.format(statement=statement)) if f.code == "DG201"]


@pytest.mark.parametrize("statement", APPENDS.values(), ids=APPENDS.keys())
def test_an_append_to_a_delta_table_not_keyed_on_the_interval_is_dg201(tmp_path, statement):
    messages = _dg201(tmp_path, statement)
    assert len(messages) == 1 and "writes with write_deltalake(..., mode='append')" in messages[0]


@pytest.mark.parametrize("statement", NOT_APPENDS.values(), ids=NOT_APPENDS.keys())
def test_other_modes_and_dagguard_writes_are_not(tmp_path, statement):
    assert _dg201(tmp_path, statement) == []


def test_a_local_function_named_write_deltalake_is_not_delta_rs(tmp_path):
    source = TASK.replace("from deltalake import write_deltalake\n", "").replace(
        "with DAG", "def write_deltalake(*args, **kwargs):\n    pass\n\n\nwith DAG")
    assert [f for f in lint(tmp_path, source.format(statement=APPENDS["imported"])) if f.code == "DG201"] == []


# pyiceberg (issue 22): Table.append(df) adds the rows again on a re-run, like a Delta append.
ICEBERG_TASK = """\
import pyarrow as pa
from airflow.sdk import DAG, task
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.sql import SqlCatalog
from dagguard.idempotent import write_interval

catalog = load_catalog("lake")

with DAG("d", schedule="@daily"):
    @task
    def store({parameters}):
        rows = pa.table({{"order_id": [1, 2]}})
        {statement}

    store()
"""
ICEBERG_APPENDS = {
    "loaded_inline": 'catalog.load_table("sales.orders").append(rows)',
    "table_bound_to_a_name": 'tbl = catalog.load_table("sales.orders")\n        tbl.append(rows)',
    "catalog_made_in_the_task": 'tbl = load_catalog("lake").load_table("sales.orders")\n        tbl.append(rows)',
    "catalog_class": 'cat = SqlCatalog("lake", uri="sqlite:///c.db")\n        '
                     'cat.create_table_if_not_exists("sales.orders", rows.schema).append(rows)',
}
ICEBERG_NOT_APPENDS = {
    "overwrite_whole_table": 'catalog.load_table("sales.orders").overwrite(rows)',
    "dynamic_partition_overwrite": 'catalog.load_table("sales.orders").dynamic_partition_overwrite(rows)',
    "upsert": 'catalog.load_table("sales.orders").upsert(rows, join_cols=["order_id"])',
    "delete_then_append": 'tbl = catalog.load_table("sales.orders")\n        '
                          'tbl.delete("ds = \'2026-01-01\'")\n        tbl.append(rows)',
    "a_list_append": 'out = []\n        out.append(rows)',
    "a_parameter_not_known_to_be_a_table": 'table.append(rows)',
    "a_name_bound_twice": 'tbl = catalog.load_table("a")\n        tbl = []\n        tbl.append(rows)',
    "a_catalog_of_another_library": 'import other\n        other.load_catalog("x").load_table("t").append(rows)',
    "through_dagguard": 'write_interval("iceberg+sqlite:///c.db", "sales.orders", rows, interval, time_column="ts")',
}


def _iceberg_codes(tmp_path, statement: str, parameters: str = "table=None") -> list[tuple[str, str]]:
    source = ICEBERG_TASK.format(statement=statement, parameters=parameters)
    return [(f.code, f.message) for f in lint(tmp_path, source) if f.code in ("DG201", "DG203")]


@pytest.mark.parametrize("statement", ICEBERG_APPENDS.values(), ids=ICEBERG_APPENDS.keys())
def test_an_append_to_an_iceberg_table_not_keyed_on_the_interval_is_dg201(tmp_path, statement):
    found = _iceberg_codes(tmp_path, statement)
    assert [code for code, _ in found] == ["DG201"]
    assert "writes with Iceberg's Table.append()" in found[0][1]


@pytest.mark.parametrize("statement", ICEBERG_NOT_APPENDS.values(), ids=ICEBERG_NOT_APPENDS.keys())
def test_iceberg_overwrites_other_appends_and_dagguard_writes_are_not(tmp_path, statement):
    assert _iceberg_codes(tmp_path, statement) == []


def test_an_iceberg_overwrite_filtered_on_the_interval_is_not_flagged(tmp_path):
    statement = ('catalog.load_table("sales.orders").overwrite(\n'
                 '            rows, overwrite_filter=f"created_at >= \'{data_interval_start}\' '
                 'AND created_at < \'{data_interval_end}\'")')
    assert _iceberg_codes(tmp_path, statement, "data_interval_start=None, data_interval_end=None") == []


def test_an_iceberg_append_of_rows_read_for_the_interval_is_keyed(tmp_path):
    statement = ('rows = read_orders(data_interval_start, data_interval_end)\n        '
                 'catalog.load_table("sales.orders").append(rows)')
    assert _iceberg_codes(tmp_path, statement, "data_interval_start=None, data_interval_end=None") == []
