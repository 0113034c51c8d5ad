"""DG201-DG203 on TaskFlow chains, full refreshes split across tasks, and Python write APIs."""

from __future__ import annotations

import pytest

from tests.lint_helpers import lint

HEAD = """\
import time
from datetime import datetime
import pandas as pd
import sqlalchemy as sa
from airflow.sdk import DAG, task, chain
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.providers.postgres.hooks.postgres import PostgresHook
from airflow.providers.amazon.aws.hooks.s3 import S3Hook
"""


def found(tmp_path, body: str, code: str) -> list[str]:
    return [f.message for f in lint(tmp_path, HEAD + body) if f.code == code]


# --- item 1: a TaskFlow call in an argument is an XCom, not a parse-time value -------------------

def test_a_clock_read_in_an_upstream_body_is_reported_once_against_its_own_task(tmp_path):
    messages = found(tmp_path, """
with DAG("d", schedule="@daily"):
    @task
    def extract():
        return {"at": datetime.utcnow().isoformat()}

    @task
    def summarize(data):
        return len(data)

    summarize(extract())
""", "DG202")
    assert len(messages) == 1
    assert messages[0].startswith("task 'extract' calls datetime.utcnow()")


@pytest.mark.parametrize(("call", "task_id"), [
    ("publish(wait())", "wait"),
    ("publish(status=wait())", "wait"),
    ("publish([wait(), 1])", "wait"),
    ("w = wait()\n    publish(w)", "wait"),
    ("publish(wait.override(task_id='w2')())", "w2"),
])
def test_upstream_taskflow_calls_in_arguments_are_not_parse_time_reads(tmp_path, call, task_id):
    assert found(tmp_path, f"""
with DAG("d", schedule="@daily"):
    @task
    def wait():
        stamp = time.time()
        return stamp

    @task
    def publish(status):
        print(status)

    {call}
""", "DG202") == [f"task '{task_id}' calls time.time(); a re-run or backfill of an old interval uses the time "
                  "it runs at, not the interval's"]


def test_an_xcom_in_op_kwargs_is_not_a_parse_time_read(tmp_path):
    messages = found(tmp_path, """
def show(value):
    print(value)

with DAG("d", schedule="@daily"):
    @task
    def extract():
        return str(datetime.now())

    PythonOperator(task_id="show", python_callable=show, op_kwargs={"value": extract()})
""", "DG202")
    assert messages == ["task 'extract' calls datetime.now(); a re-run or backfill of an old interval uses the "
                        "time it runs at, not the interval's"]


def test_a_clock_call_in_a_taskflow_argument_is_still_parse_time(tmp_path):
    (message,) = found(tmp_path, """
with DAG("d", schedule="@daily"):
    @task
    def publish(day):
        print(day)

    publish(datetime.now())
""", "DG202")
    assert "task 'publish' gets datetime.now() in 'argument' when the DAG file is parsed" in message


# --- item 2: full refreshes split across tasks, incremental loads --------------------------------

def sql_task(name: str, sql: str) -> str:
    return f'    {name} = SQLExecuteQueryOperator(task_id="{name}", conn_id="c", sql="{sql}")\n'


INSERT = sql_task("insert_rows", "INSERT INTO dim.t SELECT * FROM raw.t")


@pytest.mark.parametrize("clear", [
    "DROP TABLE dim.t", "TRUNCATE TABLE dim.t", "CREATE OR REPLACE TABLE dim.t AS SELECT 1 AS x",
    "DELETE FROM dim.t",
])
@pytest.mark.parametrize("link", [
    "clear >> insert_rows", "insert_rows << clear", "chain(clear, insert_rows)",
    "insert_rows.set_upstream(clear)", "clear.set_downstream([insert_rows])",
    "clear >> other >> insert_rows", "[other, clear] >> insert_rows",
])
def test_a_whole_table_clear_upstream_is_a_full_refresh(tmp_path, clear, link):
    body = 'with DAG("d", schedule="@daily"):\n' + sql_task("clear", clear) + \
        sql_task("other", "SELECT 1") + INSERT + f"    {link}\n"
    assert found(tmp_path, body, "DG201") == []
    assert found(tmp_path, body, "DG203") == []


@pytest.mark.parametrize("case", [
    ("DELETE FROM dim.t WHERE day = '2026-01-01'", "clear >> insert_rows"),  # part of the table
    ("TRUNCATE TABLE dim.other", "clear >> insert_rows"),                     # another table
    ("TRUNCATE TABLE dim.t", "insert_rows >> clear"),                         # runs after
    ("TRUNCATE TABLE dim.t", "clear >> other"),                               # not upstream
], ids=["partial-delete", "other-table", "downstream", "unrelated"])
def test_clears_that_do_not_refresh_the_target_first_keep_the_findings(tmp_path, case):
    clear, link = case
    body = 'with DAG("d", schedule="@daily"):\n' + sql_task("clear", clear) + \
        sql_task("other", "SELECT 1") + INSERT + f"    {link}\n"
    assert len(found(tmp_path, body, "DG201")) == 1
    assert len(found(tmp_path, body, "DG203")) == 1


def test_a_truncate_in_another_dag_does_not_count(tmp_path):
    body = ('with DAG("a", schedule="@daily"):\n' + sql_task("clear", "TRUNCATE TABLE dim.t") +
            'with DAG("b", schedule="@daily"):\n' + INSERT + "    clear >> insert_rows\n")
    assert len(found(tmp_path, body, "DG203")) == 1


@pytest.mark.parametrize("sql", [
    "INSERT INTO dim.t SELECT * FROM raw.t WHERE id NOT IN (SELECT id FROM dim.t)",
    "INSERT INTO dim.t SELECT * FROM raw.t r WHERE NOT EXISTS (SELECT 1 FROM dim.t d WHERE d.id = r.id)",
    "INSERT INTO dim.t SELECT * FROM raw.t ON CONFLICT DO NOTHING",
    "INSERT INTO dim.t SELECT * FROM raw.t WHERE id > (SELECT max(id) FROM dim.t)",
    "INSERT INTO dim.t SELECT r.* FROM raw.t r LEFT JOIN dim.t d ON d.id = r.id WHERE d.id IS NULL",
])
def test_incremental_inserts_that_skip_loaded_rows(tmp_path, sql):
    body = 'with DAG("d", schedule="@daily"):\n' + sql_task("load", sql)
    assert found(tmp_path, body, "DG201") == []
    assert found(tmp_path, body, "DG203") == []


def test_python_rows_into_a_table_refreshed_upstream_or_in_the_task(tmp_path):
    body = """
with DAG("d", schedule="@daily"):
    @task
    def truncate():
        PostgresHook("pg").run("TRUNCATE TABLE dim.t")

    @task
    def load():
        PostgresHook("pg").insert_rows("dim.t", [(1,)])

    @task
    def rebuild():
        hook = PostgresHook("pg")
        hook.run("DELETE FROM dim.u")
        hook.insert_rows("dim.u", [(1,)])

    @task
    def append():
        PostgresHook("pg").insert_rows("dim.v", [(1,)])

    truncate() >> load()
    rebuild()
    append()
"""
    assert [m.split(" writes")[0] for m in found(tmp_path, body, "DG201")] == ["task 'append'"]


def test_python_fetch_filtered_by_ids_already_loaded_in_the_task(tmp_path):
    body = """
with DAG("d", schedule="@daily"):
    @task
    def load_new():
        cursor = PostgresHook("pg").get_conn().cursor()
        cursor.execute("SELECT id FROM reports.r")
        known = {row[0] for row in cursor.fetchall()}
        for row in PostgresHook("src").get_records("SELECT id, v FROM raw.r"):
            if row[0] not in known:
                cursor.execute("INSERT INTO reports.r (id, v) VALUES (%s, %s)", row)

    load_new()
"""
    assert found(tmp_path, body, "DG201") == []
    assert found(tmp_path, body, "DG203") == []


# --- item 5: Python write paths -------------------------------------------------------------------

PY_WRITES = {
    "to_sql_append": 'pd.DataFrame().to_sql("t", engine, if_exists="append")',
    "to_sql_append_old_positional": 'pd.DataFrame().to_sql("t", engine, None, "append")',
    "sqlalchemy_insert": "engine.connect().execute(sa.insert(orders).values(id=1))",
    "table_insert_method": 'engine.connect().execute(orders.insert(), [{"id": 1}])',
    "executemany": 'PostgresHook("pg").get_conn().cursor().executemany("INSERT INTO t (id) VALUES (%s)", [(1,)])',
    "insert_rows": 'PostgresHook("pg").insert_rows("t", [(1,)])',
    "bulk_load": 'PostgresHook("pg").bulk_load("t", "/data/t.tsv")',
    "s3_fixed_key_without_replace": 'S3Hook().load_string("x", key="exports/latest.csv", bucket_name="b")',
    "s3_clock_key": 'S3Hook().load_string("x", key=f"exports/{datetime.now():%Y%m%d}.csv", bucket_name="b")',
    "gcs_upload_key_not_static": 'GCSHook().upload(bucket_name="b", object_name=MODE, data="x")',
}
PY_SAFE = {
    "to_sql_replace": 'pd.DataFrame().to_sql("t", engine, if_exists="replace")',
    "to_sql_default_fails_on_rerun": 'pd.DataFrame().to_sql("t", engine)',
    "to_sql_mode_unknown": 'pd.DataFrame().to_sql("t", engine, if_exists=MODE)',
    "to_sql_custom_method": 'pd.DataFrame().to_sql("t", engine, if_exists="append", method=upsert)',
    "pg_insert_on_conflict": "engine.connect().execute(pg_insert(orders).values(id=1).on_conflict_do_nothing())",
    "pg_insert_bound_then_upserted": (
        "stmt = pg_insert(orders).values(id=1)\n        engine.connect().execute(stmt.on_conflict_do_update("
        "index_elements=['id'], set_={'v': 1}))"),
    "s3_interval_key": 'S3Hook().load_string("x", key=f"exports/{ds}.csv", bucket_name="b")',
}
PY_HEAD = """
from sqlalchemy.dialects.postgresql import insert as pg_insert
from airflow.providers.google.cloud.hooks.gcs import GCSHook
orders = sa.Table("orders", sa.MetaData())
engine = sa.create_engine("postgresql://x")
MODE = load_mode()

def upsert(table, conn, keys, rows):
    pass

with DAG("d", schedule="@daily"):
    @task
    def write(ds=None):
        {statement}

    write()
"""


@pytest.mark.parametrize("statement", PY_WRITES.values(), ids=PY_WRITES.keys())
def test_python_write_paths_are_seen(tmp_path, statement):
    messages = found(tmp_path, PY_HEAD.replace("ds=None", "").format(statement=statement), "DG201")
    assert len(messages) == 1 and messages[0].startswith("task 'write' ")


@pytest.mark.parametrize("statement", PY_SAFE.values(), ids=PY_SAFE.keys())
def test_python_writes_that_do_not_duplicate(tmp_path, statement):
    assert found(tmp_path, PY_HEAD.format(statement=statement), "DG201") == []


# --- item 6: an upstream XCom is keyed only when its producer is ----------------------------------

PUBLISH = """
with DAG("d", schedule="@daily"):
    {producers}

    @task
    def publish(body):
        S3Hook().load_string(body, key=f"reports/{{datetime.now():%Y%m%d}}.txt", bucket_name="b")

    {call}
"""


@pytest.mark.parametrize(("producers", "call", "flagged"), [
    ("@task\n    def report():\n        return 'totals'", "publish(report())", True),
    ("@task\n    def report(ds=None):\n        return ds", "publish(report())", False),
    ("@task\n    def report(data_interval_start=None):\n        return 1\n"
     "    @task\n    def shape(x):\n        return x", "publish(shape(report()))", False),
    ("@task\n    def report():\n        return 1\n"
     "    @task\n    def shape(x):\n        return x", "publish(shape(report()))", True),
    ("src = SQLExecuteQueryOperator(task_id='src', conn_id='c', sql=\"SELECT 1 WHERE d = '{{ ds }}'\")",
     "publish(src.output)", False),
    ("src = SQLExecuteQueryOperator(task_id='src', conn_id='c', sql='SELECT count(*) FROM t')",
     "publish(src.output)", True),
    ("pass", "publish(unknown_value)", False),
], ids=["unkeyed", "keyed", "keyed-two-up", "unkeyed-two-up", "operator-keyed", "operator-unkeyed",
        "unknown"])
def test_publish_is_judged_through_its_producer(tmp_path, producers, call, flagged):
    messages = found(tmp_path, PUBLISH.format(producers=producers, call=call), "DG201")
    assert [m.split(" writes")[0] for m in messages] == (["task 'publish'"] if flagged else [])
