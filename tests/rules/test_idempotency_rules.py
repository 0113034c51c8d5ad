"""DG201-DG206 beyond the page examples: settings, severities, positions, noqa, example DAGs."""

from __future__ import annotations

from dagguard.api import check_paths
from dagguard.config import Settings
from tests.lint_helpers import NOW, codes, lint

SQL_OP = "from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator\n"


def only(findings, code):
    return [f for f in findings if f.code == code]


def test_incident_dag_gets_dg201_and_dg202_and_its_fixed_twin_nothing(repo_root):
    folder = repo_root / "example_dags"
    incident = check_paths([folder / "incident_orders_hourly.py"], settings=Settings(), now=NOW)
    found = codes(list(incident.findings))
    assert {"DG201", "DG202"} <= set(found)
    assert found.count("DG202") == 2  # datetime.now() and CURRENT_DATE
    fixed = check_paths([folder / "orders_hourly_fixed.py"], settings=Settings(), now=NOW)
    assert list(fixed.findings) == [] and fixed.internal_errors == ()


def test_findings_point_at_the_sql_string(tmp_path):
    found = lint(tmp_path, SQL_OP + """\
from airflow.sdk import DAG
with DAG("d", schedule="@daily"):
    SQLExecuteQueryOperator(
        task_id="t",
        conn_id="c",
        sql="INSERT INTO t SELECT * FROM s",
    )
""")
    (dg203,) = only(found, "DG203")
    assert (dg203.line, dg203.column) == (7, 13)
    assert "task 't' appends to t with INSERT INTO" in dg203.message


def test_one_finding_per_sql_text_and_table_and_noqa(tmp_path):
    found = lint(tmp_path, SQL_OP + """\
from airflow.sdk import DAG
with DAG("d", schedule="@daily"):
    SQLExecuteQueryOperator(task_id="a", sql="INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)")
    SQLExecuteQueryOperator(task_id="b", sql="INSERT INTO u VALUES (1)")  # noqa: DG203
""")
    assert [f.message.split(" with ")[0] for f in only(found, "DG203")] == ["task 'a' appends to t"]


def test_removed_variable_is_a_warning_on_airflow_2(tmp_path):
    code = """\
from airflow.operators.bash import BashOperator
from airflow import DAG
with DAG("d", schedule_interval=None):
    BashOperator(task_id="t", bash_command="echo {{ execution_date }}")
"""
    (on3,) = only(lint(tmp_path, code), "DG205")
    (on2,) = only(lint(tmp_path, code, airflow_version="2"), "DG205")
    assert (on3.severity, on2.severity) == ("error", "warning")


def test_write_task_patterns_setting(tmp_path):
    code = """\
from airflow.sdk import DAG, task
from vendor import client
with DAG("d", schedule="@daily"):
    @task
    def ship_orders():
        client.put_item({"id": 1})
    ship_orders()
"""
    assert not only(lint(tmp_path, code), "DG201")
    assert only(lint(tmp_path, code, write_task_patterns=("ship",)), "DG201")


def test_transfer_operators(tmp_path):
    code = """\
from airflow.sdk import DAG
from airflow.providers.amazon.aws.transfers.s3_to_redshift import S3ToRedshiftOperator
from airflow.providers.google.cloud.transfers.gcs_to_bigquery import GCSToBigQueryOperator
with DAG("d", schedule="@daily"):
    S3ToRedshiftOperator(task_id="append", s3_bucket="b", s3_key="orders.csv", schema="s", table="orders")
    S3ToRedshiftOperator(task_id="replace", s3_bucket="b", s3_key="orders.csv", schema="s", table="orders",
                         method="REPLACE")
    GCSToBigQueryOperator(task_id="truncate", bucket="b", source_objects=["o.csv"],
                          destination_project_dataset_table="p.d.t", write_disposition="WRITE_TRUNCATE")
    GCSToBigQueryOperator(task_id="bq_append", bucket="b", source_objects=["o.csv"],
                          destination_project_dataset_table="p.d.t", write_disposition="WRITE_APPEND")
    S3ToRedshiftOperator(task_id="keyed", s3_bucket="b", s3_key="orders/{{ ds }}.csv", schema="s", table="orders")
"""
    messages = [f.message for f in only(lint(tmp_path, code), "DG201")]
    assert len(messages) == 2
    assert "task 'append' (S3ToRedshiftOperator) writes to 'orders'" in messages[0]
    assert "task 'bq_append'" in messages[1]


def test_shared_callable_is_reported_once(tmp_path):
    code = """\
from datetime import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.python import PythonOperator
def stamp():
    return datetime.now().isoformat()
with DAG("d", schedule="@daily"):
    PythonOperator(task_id="a", python_callable=stamp)
    PythonOperator(task_id="b", python_callable=stamp)
"""
    assert len(only(lint(tmp_path, code), "DG202")) == 1


def test_fstring_sql_is_read_but_its_python_parts_count_as_keyed(tmp_path):
    code = SQL_OP + """\
from airflow.sdk import DAG
TABLE = "analytics.orders"
with DAG("d", schedule="@daily"):
    SQLExecuteQueryOperator(task_id="t", sql=f"INSERT INTO {TABLE} SELECT * FROM raw WHERE d = CURRENT_DATE")
"""
    found = lint(tmp_path, code)
    assert not only(found, "DG201")
    assert "appends to {TABLE}" in only(found, "DG203")[0].message
    assert only(found, "DG202")


def test_staging_files_are_not_writes(tmp_path):
    code = """\
import tempfile
from airflow.sdk import DAG, task
with DAG("d", schedule="@daily"):
    @task
    def export_a(df):
        df.to_csv("/tmp/orders.csv")
    @task
    def export_b(df):
        with tempfile.NamedTemporaryFile() as f:
            df.to_parquet(f.name)
    export_a(1)
    export_b(1)
"""
    assert not only(lint(tmp_path, code), "DG201")


def test_empty_interval_once_per_task_and_its_switches(tmp_path):
    code = SQL_OP + """\
from airflow.sdk import DAG
with DAG("d", schedule="*/15 * * * *"):
    SQLExecuteQueryOperator(task_id="t", sql=[
        "DELETE FROM t WHERE ts >= '{{ data_interval_start }}' AND ts < '{{ data_interval_end }}'",
        "INSERT INTO t SELECT * FROM s WHERE ts >= '{{ data_interval_start }}' AND ts < '{{ data_interval_end }}'",
    ])
"""
    (finding,) = only(lint(tmp_path, code), "DG206")
    assert "scheduled '*/15 * * * *'" in finding.message
    assert not only(lint(tmp_path, code, create_cron_data_intervals=True), "DG206")
    assert not only(lint(tmp_path, code, airflow_version="2"), "DG206")


def test_sql_file_next_to_the_dag(tmp_path):
    (tmp_path / "load.sql").write_text("INSERT INTO t SELECT * FROM s WHERE d BETWEEN '{{ ds }}' AND '{{ next_ds }}'")
    found = lint(tmp_path, SQL_OP + """\
from airflow.sdk import DAG
with DAG("d", schedule="@daily"):
    SQLExecuteQueryOperator(task_id="t", sql="load.sql")
    SQLExecuteQueryOperator(task_id="gone", sql="not_there.sql")
""")
    assert sorted(set(codes(found)) & {"DG203", "DG204", "DG205"}) == ["DG203", "DG204", "DG205"]
    assert all("'gone'" not in f.message for f in found)


def test_query_parameters_bind_into_a_sql_file_and_only_static_ones_count(tmp_path):
    (tmp_path / "load.sql").write_text("DELETE FROM t WHERE ts >= %(start)s AND ts < %(end)s")
    code = SQL_OP + """\
from airflow.sdk import DAG
with DAG("d", schedule="@hourly"):
    SQLExecuteQueryOperator(task_id="bound", sql="load.sql",
                            parameters={"start": "{{ data_interval_start }}", "end": "{{ data_interval_end }}"})
    SQLExecuteQueryOperator(task_id="unknown", sql="load.sql", parameters=get_bounds())
    SQLExecuteQueryOperator(task_id="literal", sql="load.sql",
                            parameters={"start": "2026-01-01", "end": "2026-01-02"})
"""
    (finding,) = only(lint(tmp_path, code), "DG206")
    assert "task 'bound'" in finding.message


def test_dags_without_a_recurring_schedule_are_not_judged(tmp_path):
    body = """\
from datetime import datetime
from airflow.sdk import DAG, Asset, task
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
with DAG("d", schedule=SCHEDULE):
    SQLExecuteQueryOperator(task_id="seed", sql="INSERT INTO t SELECT * FROM s WHERE d = CURRENT_DATE")
    @task
    def stamp():
        return datetime.now().isoformat()
    stamp()
"""
    for schedule in ("None", '"@once"', '[Asset("s3://b/k")]', "get_schedule()"):
        found = lint(tmp_path, body.replace("SCHEDULE", schedule))
        assert not set(codes(found)) & {"DG201", "DG202", "DG203"}, schedule
    assert {"DG201", "DG202", "DG203"} <= set(codes(lint(tmp_path, body.replace("SCHEDULE", '"@daily"'))))


def test_write_pattern_matching_is_by_word():
    from dagguard.model.tasks.writes import matches_write_pattern

    patterns = ("export", "load", "push", "*_out")
    assert matches_write_pattern("export_orders", patterns)
    assert matches_write_pattern("s3Upload", ("upload",))
    assert matches_write_pattern("orders_out", patterns)
    assert not matches_write_pattern("download_file", patterns)
    assert not matches_write_pattern("reload_config", patterns)


def test_task_bash_return_value_is_a_template(tmp_path):
    code = """\
from airflow.sdk import DAG, task
with DAG("d", schedule="@daily"):
    @task.bash
    def report():
        return "make report DATE={{ execution_date | ds }}"
    report()
"""
    (finding,) = only(lint(tmp_path, code), "DG205")
    assert "in the returned command" in finding.message


def test_dg204_names_the_bound_as_written_and_its_help_fits_the_timetable(tmp_path):
    found = lint(tmp_path, SQL_OP + """\
from airflow.sdk import DAG, CronDataIntervalTimetable
with DAG("intervals", schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC")):
    SQLExecuteQueryOperator(task_id="a", conn_id="c",
        sql="SELECT * FROM s WHERE day >= '{{ data_interval_start | ds }}' AND day <= '{{ data_interval_end | ds }}'")
with DAG("trigger", schedule="@daily"):
    SQLExecuteQueryOperator(task_id="b", conn_id="c",
        sql="SELECT * FROM s WHERE day BETWEEN '{{ ds }}' AND '{{ macros.ds_add(ds, 1) }}'")
""")
    first, second = only(found, "DG204")
    assert "with <= {{ data_interval_end | ds }}," in first.message
    assert first.help == "use day >= '{{ data_interval_start }}' AND day < '{{ data_interval_end }}'"
    # On a trigger timetable data_interval_start..end is empty: keep the user's end, exclusive.
    assert "BETWEEN ... AND {{ macros.ds_add(ds, 1) }}" in second.message
    assert second.help == "end the range with day < '{{ macros.ds_add(ds, 1) }}'"


def test_dg205_parameters_the_task_fills_itself_are_no_context_lookups(tmp_path):
    found = lint(tmp_path, """\
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, task

def stamp(execution_date, next_ds=None, *, prev_ds=None):
    return execution_date, next_ds, prev_ds

with DAG("d", schedule=None):
    @task
    def tf(execution_date=None, next_ds=None):
        return execution_date, next_ds
    tf("{{ ds }}")                                                  # next_ds from the context
    tf("{{ ds }}", "{{ ds }}")                                      # nothing from the context
    tf(*["{{ ds }}"])                                               # any positional one may be filled
    PythonOperator(task_id="by_position", python_callable=stamp, op_args=["{{ ts_nodash }}"])
    PythonOperator(task_id="by_both", python_callable=stamp, op_args=["a", "b"], op_kwargs={"prev_ds": "c"})
    PythonOperator(task_id="unknown_kwargs", python_callable=stamp, op_kwargs=make_kwargs())
    PythonOperator(task_id="nothing_passed", python_callable=stamp)
""")
    flagged = sorted((f.line, f.message.split("'")[1], f.message.split("'")[3]) for f in only(found, "DG205"))
    # A parameter is reported once, by the first task that leaves it to the context.
    assert flagged == [
        (4, "by_position", "next_ds"), (4, "by_position", "prev_ds"), (4, "nothing_passed", "execution_date"),
        (9, "tf", "next_ds"),
    ]


def test_dg203_reports_a_script_once_per_table_it_appends_to(tmp_path):
    found = lint(tmp_path, SQL_OP + '''\
from airflow.sdk import DAG
with DAG("d", schedule="@daily"):
    SQLExecuteQueryOperator(task_id="seed", conn_id="c", sql="""
        INSERT INTO users VALUES (1, 'a');
        INSERT INTO users VALUES (2, 'b');
        INSERT INTO roles VALUES (1, 'admin');
        INSERT INTO users VALUES (3, 'c');
    """)
''')
    assert sorted(f.message.split(" with ")[0] for f in only(found, "DG203")) == [
        "task 'seed' appends to roles", "task 'seed' appends to users"]


def test_dg205_help_fits_python_code_and_the_dags_timetable(tmp_path):
    found = lint(tmp_path, """\
from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, CronDataIntervalTimetable

def f(**context):
    return context["yesterday_ds_nodash"]

with DAG("trigger", schedule="@daily"):
    BashOperator(task_id="a", bash_command="echo {{ next_ds }}")
    PythonOperator(task_id="p", python_callable=f)
with DAG("intervals", schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC")):
    BashOperator(task_id="b", bash_command="echo {{ next_ds }}")
""")
    helps = {f.message.split("'")[1]: f.help for f in only(found, "DG205")}
    # Python gets code over the context, not a template macro.
    assert helps["p"] == 'read (context["logical_date"] - timedelta(days=1)).strftime("%Y%m%d") instead'
    # On a trigger timetable data_interval_end is the run's own date: the plain swap shifts a day.
    assert helps["a"].startswith("use {{ data_interval_end | ds }} with a data-interval timetable; on '@daily'")
    assert "{{ macros.ds_add(ds, 1) }}" in helps["a"]
    assert helps["b"] == "use {{ data_interval_end | ds }}"


def test_dg206_help_for_a_trigger_timetable_class_is_its_interval_argument(tmp_path):
    found = lint(tmp_path, SQL_OP + """\
from airflow.sdk import DAG, CronTriggerTimetable, MultipleCronTriggerTimetable
SQL = "SELECT * FROM s WHERE ts >= '{{ data_interval_start }}' AND ts < '{{ data_interval_end }}'"
TWICE = MultipleCronTriggerTimetable("0 1 * * *", "0 13 * * *", timezone="UTC")
with DAG("several", schedule=TWICE):
    SQLExecuteQueryOperator(task_id="a", conn_id="c", sql=SQL)
with DAG("one", schedule=CronTriggerTimetable("0 0 * * *", timezone="UTC")):
    SQLExecuteQueryOperator(task_id="b", conn_id="c", sql=SQL)
with DAG("string", schedule="@daily"):
    SQLExecuteQueryOperator(task_id="c", conn_id="c", sql=SQL)
""")
    helps = {f.dag_id: f.help for f in only(found, "DG206")}
    assert helps["several"].startswith("pass MultipleCronTriggerTimetable the time between its runs as interval=")
    assert helps["one"].startswith("pass CronTriggerTimetable the time between its runs as interval=")
    assert "create-cron-data-intervals" in helps["string"]


def test_dg202_clock_read_while_the_file_is_parsed(tmp_path):
    found = lint(tmp_path, """\
from datetime import date, datetime
import pendulum
from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, task

YESTERDAY = (date.today().replace(day=1)).isoformat()

def load(day):
    return day

with DAG("d", schedule="@daily", start_date=pendulum.datetime(2025, 1, 1, tz="UTC")):
    BashOperator(task_id="fstring", bash_command=f"export --date {date.today()}")
    BashOperator(task_id="constant", bash_command="export --date " + YESTERDAY)
    PythonOperator(task_id="kwargs", python_callable=load, op_kwargs={"day": datetime.now().strftime("%Y%m%d")})
    BashOperator(task_id="own_start", bash_command="export --date {{ ds }}", start_date=pendulum.now())
    PythonOperator(task_id="later", python_callable=lambda: load(datetime.now()))
    PythonOperator(task_id="attribute", python_callable=load, op_kwargs={"day": pendulum.datetime(2025, 1, 1).now})

    @task
    def taskflow(day):
        return day
    taskflow(pendulum.now().to_date_string())

with DAG("manual", schedule=None):
    BashOperator(task_id="manual", bash_command=f"export --date {date.today()}")
""")
    flagged = sorted((f.line, f.message.split("'")[1], f.message.split(" in '")[1].split("'")[0])
                     for f in only(found, "DG202"))
    # The constant is reported where it reads the clock; a lambda runs later, a task's own
    # start_date is DG104's, a manual DAG has only the clock.
    assert flagged == [(7, "constant", "bash_command"), (13, "fstring", "bash_command"),
                       (15, "kwargs", "op_kwargs"), (23, "taskflow", "argument")]


def test_sql_wrapped_in_sqlalchemy_text_is_read(tmp_path):
    found = lint(tmp_path, """\
import sqlalchemy as sa
from sqlalchemy import text
from airflow.sdk import DAG, task

def text_of(x):
    return x

with DAG("d", schedule="@daily"):
    @task
    def t(session=None):
        session.execute(text("DELETE FROM session WHERE expiry < now()"))
        session.execute(sa.text("INSERT INTO audit SELECT * FROM log"))
        session.execute(text_of("INSERT INTO other SELECT * FROM log"))  # not SQLAlchemy's
    t()
""")
    assert [(f.code, f.line) for f in found if f.code in ("DG202", "DG203")] == [("DG202", 11), ("DG203", 12)]


def test_clock_reads_in_same_file_functions_called_while_parsing(tmp_path):
    found = lint(tmp_path, """\
import logging
from datetime import datetime, timedelta
import pendulum
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG

log = logging.getLogger(__name__)

def lookback():
    since = datetime.now() - timedelta(days=60)
    print(since)
    return since.strftime("%Y-%m-%dT%H:00:00")

def through():
    return lookback()

def logged_only():
    log.info("built at %s", datetime.now())
    print(datetime.now())
    return "2025-01-01"

def later():
    def inner():
        return datetime.now()
    return inner

def start():
    return pendulum.now().subtract(days=1)

def load(since):
    return since

with DAG("d", schedule="@daily", start_date=start()):
    PythonOperator(task_id="a", python_callable=load, op_kwargs={"since": lookback()})
    PythonOperator(task_id="b", python_callable=load, op_kwargs={"since": through()})
    PythonOperator(task_id="c", python_callable=load, op_kwargs={"since": logged_only()})
    PythonOperator(task_id="d", python_callable=load, op_kwargs={"since": later()})
""")
    dg202 = [(f.line, f.message.split("'")[1]) for f in only(found, "DG202")]
    assert dg202 == [(10, "a")]  # b reaches the same read, which is reported once
    [dg104] = only(found, "DG104")
    assert "pendulum.now()" in dg104.message
    source = (tmp_path / "dag.py").read_text()
    only_b = source.replace('    PythonOperator(task_id="a"', '    # PythonOperator(task_id="a"')
    assert [(f.line, f.message.split("'")[1]) for f in only(lint(tmp_path, only_b), "DG202")] == [(10, "b")]


def test_dg206_reads_the_clock_part_of_an_asset_or_time_schedule(tmp_path):
    found = lint(tmp_path, SQL_OP + """\
from airflow.sdk import (DAG, Asset, AssetOrTimeSchedule, CronDataIntervalTimetable, CronTriggerTimetable,
                         MultipleCronTriggerTimetable)
SQL = "SELECT * FROM s WHERE ts >= '{{ data_interval_start }}' AND ts < '{{ data_interval_end }}'"
TWICE = MultipleCronTriggerTimetable("0 0 * * *", "0 12 * * *", timezone="UTC")
with DAG("trigger", schedule=AssetOrTimeSchedule(timetable=CronTriggerTimetable("0 0 * * *", timezone="UTC"),
                                                 assets=[Asset("x")])):
    SQLExecuteQueryOperator(task_id="a", conn_id="c", sql=SQL)
with DAG("intervals", schedule=AssetOrTimeSchedule(timetable=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
                                                   assets=[Asset("x")])):
    SQLExecuteQueryOperator(task_id="b", conn_id="c", sql=SQL)
with DAG("several", schedule=AssetOrTimeSchedule(timetable=TWICE, assets=[Asset("x")])):
    SQLExecuteQueryOperator(task_id="c", conn_id="c", sql=SQL)
""")
    schedules = {f.dag_id: f.message.split(" is scheduled ")[1].split(",")[0] for f in only(found, "DG206")}
    assert schedules == {"trigger": "AssetOrTimeSchedule with a CronTriggerTimetable",
                         "several": "AssetOrTimeSchedule with a MultipleCronTriggerTimetable"}
    assert all(f.help.startswith("pass CronTriggerTimetable") or f.help.startswith("pass MultipleCron")
               for f in only(found, "DG206"))
