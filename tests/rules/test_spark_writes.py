"""DG201 on Spark writes from a task: `df.write.mode("append")...` and `insertInto` (which appends
by default) add the rows again on every re-run; overwrites, the default modes that refuse an
existing table, an unknown mode, and writes through dagguard.idempotent do not."""

from __future__ import annotations

import pytest

from tests.lint_helpers import lint

TASK = """\
from airflow.sdk import DAG, task
from dagguard.idempotent import write_interval

with DAG("d", schedule="@daily"):
    @task.pyspark
    def store(spark=None):
        df = spark.read.parquet("s3://raw/orders")
        {statement}

    store()
"""
APPENDS = {
    "mode_append_insert_into": 'df.write.mode("append").insertInto("orders")',
    "insert_into_default": 'df.write.insertInto("orders")',
    "insert_into_not_overwrite": 'df.write.insertInto("orders", overwrite=False)',
    "save_as_table_append": 'df.write.format("parquet").mode("append").saveAsTable("orders")',
    "save_as_table_mode_keyword": 'df.write.saveAsTable("orders", mode="append")',
    "parquet_append": 'df.write.partitionBy("ds").mode("append").parquet("s3://lake/orders")',
    "writer_v2_append": 'df.writeTo("lake.orders").append()',
}
NOT_APPENDS = {
    "insert_into_overwrite": 'df.write.insertInto("orders", overwrite=True)',
    "mode_overwrite": 'df.write.mode("overwrite").insertInto("orders")',
    "save_as_table_default_refuses": 'df.write.saveAsTable("orders")',
    "mode_unknown": 'df.write.mode(MODE).saveAsTable("orders")',
    "list_append": 'names = []; names.append("x")',
    "through_dagguard": 'write_interval(spark, "orders", df, interval, time_column="ts")',
}


def _dg201(tmp_path, statement: str) -> list[str]:
    return [f.message for f in lint(tmp_path, TASK.format(statement=statement)) if f.code == "DG201"]


@pytest.mark.parametrize("statement", APPENDS.values(), ids=APPENDS.keys())
def test_a_spark_append_not_keyed_on_the_interval_is_dg201(tmp_path, statement):
    messages = _dg201(tmp_path, statement)
    assert len(messages) == 1, messages
    assert "append" in messages[0]


@pytest.mark.parametrize("statement", NOT_APPENDS.values(), ids=NOT_APPENDS.keys())
def test_spark_overwrites_unknown_modes_and_dagguard_writes_are_not(tmp_path, statement):
    assert _dg201(tmp_path, statement) == []


def test_spark_sql_insert_into_is_dg203_and_insert_overwrite_is_not(tmp_path):
    def codes(statement: str) -> list[str]:
        return sorted(f.code for f in lint(tmp_path, TASK.format(statement=statement)) if f.code in ("DG201", "DG203"))

    assert codes('spark.sql("INSERT INTO lake.orders SELECT * FROM raw.orders")') == ["DG201", "DG203"]
    assert codes('spark.sql(sqlQuery="INSERT INTO lake.orders SELECT * FROM raw.orders")') == ["DG201", "DG203"]
    assert codes('spark.sql("INSERT OVERWRITE lake.orders SELECT * FROM raw.orders")') == []
    assert codes('spark.sql("SELECT * FROM raw.orders").show()') == []
