"""The shared per-task analysis: callables (clock, writes, context lookups), SQL sources,
.sql files, caching, and lazy imports."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst

from dagguard.model.dags.builder import build_file_model
from dagguard.model.tasks.task_io import file_task_ios, task_io

HEADER = """
import datetime
import logging
import time
from airflow.sdk import DAG, task, get_current_context
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.providers.standard.operators.python import PythonOperator
log = logging.getLogger(__name__)
"""


def analyse(body: str, path: Path = Path("dag.py")):
    code = HEADER + textwrap.dedent(body)
    file = build_file_model(cst.parse_module(code))
    return file, list(file_task_ios(file, path))


def one(body: str, path: Path = Path("dag.py")):
    _, ios = analyse(body, path)
    (io,) = ios
    return io


def test_the_analysis_is_cached_on_the_file_model():
    file, (io,) = analyse("""
        with DAG("d", schedule=None):
            SQLExecuteQueryOperator(task_id="t", sql="SELECT 1")
    """)
    dag = file.dags[0]
    assert task_io(file, dag, dag.tasks[0], Path("dag.py")) is io


def test_clock_reads_that_escape_and_those_only_logged():
    io = one("""
        with DAG("d", schedule=None):
            @task
            def t():
                start = time.time()
                log.info("started at %s", datetime.datetime.now())
                print(time.time() - start)
                deadline = time.time() + 60
                while time.time() < deadline:
                    pass
                stamp = datetime.datetime.now().strftime("%Y")
                return {"day": stamp}
            t()
    """)
    assert [r.name for r in io.callable.clock_reads] == ["datetime.datetime.now()"]


def test_context_lookups_of_removed_keys():
    io = one("""
        with DAG("d", schedule=None):
            @task
            def t(execution_date=None, **kwargs):
                ctx = get_current_context()
                a = kwargs["next_ds"]
                b = kwargs.get("prev_ds")
                c = ctx["yesterday_ds"]
                d = kwargs["dag_run"].conf
                return a, b, c, d
            t()
    """)
    assert [lookup.key for lookup in io.callable.removed_lookups] == [
        "execution_date", "next_ds", "prev_ds", "yesterday_ds"]


def test_explicitly_passed_parameter_is_not_a_context_lookup():
    io = one("""
        with DAG("d", schedule=None):
            @task
            def t(execution_date=None):
                return execution_date
            t(execution_date="{{ logical_date }}")
    """)
    assert io.callable.removed_lookups == ()


def test_keyed_through_parameters_context_or_helpers():
    keyed = one("""
        with DAG("d", schedule=None):
            @task
            def t(data_interval_start=None):
                return data_interval_start
            t()
    """)
    through_context = one("""
        with DAG("d", schedule=None):
            @task
            def t():
                return get_current_context()["dag_run"].logical_date
            t()
    """)
    forwarded = one("""
        from helpers import write_all
        with DAG("d", schedule=None):
            @task
            def t(**context):
                write_all(context)
            t()
    """)
    unkeyed = one("""
        with DAG("d", schedule=None):
            @task
            def t(**context):
                ti = context["ti"]
                return ti.xcom_pull(task_ids="x")
            t()
    """)
    assert keyed.keyed and through_context.keyed and forwarded.keyed
    assert not unkeyed.keyed


def test_write_calls_in_the_callable_and_same_file_helpers():
    io = one("""
        import tempfile
        def save(df):
            df.to_parquet("s3://bucket/orders.parquet")
        with DAG("d", schedule=None):
            @task
            def t(hook, df):
                hook.insert_rows("orders", [(1,)])
                hook.insert_rows("orders", [(1,)], replace=True)
                df.to_csv()
                save(df)
            t.override(task_id="x")()
    """)
    assert [(w.what, w.upsert) for w in io.callable.writes] == [
        ("insert_rows()", False), ("insert_rows()", True), (".to_parquet()", False)]


def test_sql_in_the_callable_in_source_order_with_fstrings():
    io = one("""
        TABLE = "analytics.orders"
        with DAG("d", schedule=None):
            def export(cursor):
                cursor.execute(f"DELETE FROM {TABLE}")
                cursor.execute(f"INSERT INTO {TABLE} VALUES (1)")
                cursor.execute(build_query())
            PythonOperator(task_id="export", python_callable=export)
    """)
    texts = [s.template.text if s.template else None for s in io.sql]
    assert texts[0].startswith("DELETE FROM __dgt_") and texts[1].startswith("INSERT INTO __dgt_")
    assert texts[2] is None
    assert all(s.in_callable for s in io.sql)


def test_sql_lists_constants_and_bigquery_configuration():
    io = one("""
        CLEAN = "DELETE FROM t WHERE d = '{{ ds }}'"
        with DAG("d", schedule=None):
            SQLExecuteQueryOperator(task_id="a", sql=[CLEAN, "INSERT INTO t SELECT * FROM s"])
    """)
    assert [s.origin for s in io.sql] == ["sql", "sql"]
    assert io.templated_interval and io.sql[0].parsed.fully_parsed
    bq = one("""
        from airflow.providers.google.cloud.operators.bigquery import BigQueryInsertJobOperator
        with DAG("d", schedule=None):
            BigQueryInsertJobOperator(task_id="q", configuration={"query": {"query": "SELECT 1", "useLegacySql": False}})
    """)
    assert [s.origin for s in bq.sql] == ["configuration.query.query"]


def test_sql_files_next_to_the_dag_and_on_the_search_path(tmp_path):
    (tmp_path / "queries").mkdir()
    (tmp_path / "queries" / "load.sql").write_text("INSERT INTO t SELECT * FROM s WHERE d = '{{ ds }}'")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "clean.sql").write_text("DELETE FROM t")
    io = one("""
        with DAG("d", schedule=None, template_searchpath=["shared"]):
            SQLExecuteQueryOperator(task_id="a", sql=["clean.sql", "queries/load.sql", "missing.sql"])
    """, tmp_path / "dag.py")
    assert [s.origin for s in io.sql] == ["file clean.sql", "file queries/load.sql", "file missing.sql"]
    assert io.sql[1].template.interval
    assert io.sql[2].parsed is None  # a missing file is skipped, not an error


def test_unknown_arguments_make_the_task_keyed():
    io = one("""
        from somewhere import KEY
        from airflow.providers.amazon.aws.transfers.sql_to_s3 import SqlToS3Operator
        with DAG("d", schedule=None):
            SqlToS3Operator(task_id="x", query="SELECT 1", s3_bucket="b", s3_key=KEY, sql_conn_id="c")
    """)
    assert io.unknown_data and io.keyed


def test_jinja_and_sqlglot_are_imported_only_when_needed(tmp_path):
    dag = tmp_path / "plain.py"
    dag.write_text("from airflow.sdk import DAG, task\nwith DAG('d', schedule=None):\n"
                   "    @task\n    def t():\n        return 1\n    t()\n")
    code = ("import sys; from pathlib import Path; from dagguard.api import check_paths; "
            "from dagguard.config import Settings; "
            f"check_paths([Path({str(dag)!r})], settings=Settings()); "
            "print('jinja2' in sys.modules, 'sqlglot' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_op_kwargs_keys_are_not_context_lookups():
    io = one("""
        def report(execution_date):
            return execution_date
        with DAG("d", schedule=None):
            PythonOperator(task_id="r", python_callable=report, op_kwargs={"execution_date": "{{ logical_date }}"})
    """)
    assert io.callable.removed_lookups == ()


def test_dagguard_helpers_count_as_keyed():
    operator = one("""
        from dagguard.idempotent import IntervalMergeOperator
        with DAG("d", schedule=None):
            IntervalMergeOperator(task_id="m", conn_id="w", source_sql="SELECT * FROM s",
                                  target_table="t", time_column="ts")
    """)
    helper = one("""
        from dagguard.idempotent import write_interval, interval_from_context
        with DAG("d", schedule=None):
            @task
            def load_rows(**context):
                write_interval("warehouse", "t", [{"id": 1}], interval_from_context(context))
            load_rows()
    """)
    decorated = one("""
        from dagguard.idempotent import idempotent_write
        with DAG("d", schedule=None):
            @task
            @idempotent_write(conn_id="w", table="t", time_column="ts")
            def load_rows():
                return [{"id": 1}]
            load_rows()
    """)
    assert operator.keyed and [s.origin for s in operator.sql] == ["source_sql"]
    assert helper.keyed and helper.callable.idempotent_helper
    assert decorated.keyed and decorated.callable.idempotent_helper


def test_same_file_helpers_are_followed_in_order():
    io = one("""
        def clean(cursor):
            cursor.execute("DELETE FROM t")
        def stamp():
            return datetime.datetime.utcnow()
        with DAG("d", schedule=None):
            @task
            def load(cursor):
                clean(cursor)
                cursor.execute("INSERT INTO t VALUES (1)")
                return stamp()
            load(1)
    """)
    assert [s.template.text for s in io.sql] == ["DELETE FROM t", "INSERT INTO t VALUES (1)"]
    assert [r.name for r in io.callable.clock_reads] == ["datetime.datetime.utcnow()"]



def bound_keys(body: str) -> list[frozenset[str]]:
    """Per query the tasks' callables run, the context keys its parameters were bound to."""
    _, ios = analyse(body)
    return [source.template.roots for io in ios for source in io.sql if source.in_callable]


def test_query_parameters_holding_interval_bounds_are_bound_into_the_sql():
    assert bound_keys("""
        with DAG("d", schedule=None):
            @task
            def t(data_interval_start=None, data_interval_end=None, **context):
                hook.run("DELETE FROM x WHERE ts >= %(s)s AND ts < %(e)s",
                         parameters={"s": data_interval_start, "e": data_interval_end})
                cursor.execute("SELECT 1 FROM x WHERE ts >= %s AND ts < %s",
                               (context["data_interval_start"], context.get("data_interval_end")))
                hook.get_records("SELECT 1 FROM x WHERE ts < %s", [data_interval_end])
            t()
    """) == [frozenset({"data_interval_start", "data_interval_end"})] * 2 + [frozenset({"data_interval_end"})]


def test_query_parameters_holding_the_logical_date_are_bound_into_the_sql_even_formatted():
    _, ios = analyse("""
        with DAG("d", schedule=None):
            @task
            def t(ds=None, logical_date=None, **context):
                hook.get_records("SELECT 1 FROM x WHERE d = %s AND t >= %s AND u = %s",
                                 (ds, logical_date.date(), context["ts"].strftime("%Y")))
                hook.get_records("SELECT 1 FROM x WHERE d = %s", (logical_date.replace(day=1),))
            t()
    """)
    first, second = (source.template for io in ios for source in io.sql if source.in_callable)
    assert [e.source for e in first.expressions] == ["ds", "logical_date.date()", "ts.strftime()"]
    assert {e.run_date for e in first.expressions} == {"ds", "logical_date", "ts"}
    assert not second.roots  # replace() moves the date: not the logical date any more


def test_parameters_not_certainly_the_bounds_keep_their_placeholders():
    assert bound_keys("""
        from helpers import shift
        with DAG("d", schedule=None):
            @task
            def rebound(data_interval_end=None):
                data_interval_end = shift(data_interval_end)
                hook.run("SELECT 1 FROM x WHERE ts < %(e)s", parameters={"e": data_interval_end})
            @task
            def passed_by_the_dag(data_interval_end=None):
                hook.run("SELECT 1 FROM x WHERE ts < %s", parameters=[data_interval_end])
            @task
            def other_keys(run_id=None, **context):
                hook.run("SELECT 1 FROM x WHERE d = %s AND t < %s", parameters=(run_id, context["dag_run"]))
            @task
            def autocommit_is_not_parameters(data_interval_end=None):
                hook.run("SELECT 1 FROM x WHERE ts < %s", data_interval_end)
            rebound()
            passed_by_the_dag(data_interval_end="2026-01-01")
            other_keys()
            autocommit_is_not_parameters()
    """) == [frozenset()] * 4
