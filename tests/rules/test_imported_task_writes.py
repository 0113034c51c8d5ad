"""DG201 for a task whose callable another module of the project defines (an imported @task
function, or an imported python_callable): its body has no DAG in its own module, so a write not
keyed on the interval is reported in the DAG file, at the call or operator that makes it a task
of a DAG on a recurring schedule, naming where the body writes. Regression: such writes went
unreported while the same body in the DAG's own file was flagged."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_imported_values import _check, _write

LOAD = """\
import pandas as pd
import sqlalchemy
from airflow.sdk import task


@task
def load_orders():
    frame = pd.read_csv("s3://raw/orders/latest.csv")
    frame.to_sql("orders", sqlalchemy.create_engine("postgresql://w"), if_exists="append")


def load_customers():
    frame = pd.read_csv("s3://raw/customers/latest.csv")
    frame.to_sql("customers", sqlalchemy.create_engine("postgresql://w"), if_exists="append")


def load_keyed(data_interval_start=None):
    day = data_interval_start.strftime("%Y%m%d")
    frame = pd.read_csv(f"s3://raw/customers/{day}.csv")
    frame.to_sql(f"customers_{day}", sqlalchemy.create_engine("postgresql://w"), if_exists="replace")


def push_metrics():
    client = make_client()
    client.put_item(Item={"name": "orders", "count": 1})


def make_client():
    return None
"""
ORDERS = """\
import pendulum
from airflow.sdk import DAG
from airflow.providers.standard.operators.python import PythonOperator
from tasks.load import {names}

with DAG("orders", schedule={schedule}, start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=False):
{body}
"""


def _dg201(root: Path, body: str, names: str = "load_orders", schedule: str = '"@daily"'):
    _write(root, {"dags/tasks/__init__.py": "", "dags/tasks/load.py": LOAD,
                  "dags/orders.py": ORDERS.format(names=names, schedule=schedule, body=body)})
    return [f for f in _check(root, root).findings if f.code == "DG201"]


def test_a_write_in_an_imported_task_is_reported_at_the_call(tmp_path):
    found = _dg201(tmp_path, "    load_orders()")
    assert [(Path(f.path).name, f.line, f.column) for f in found] == [("orders.py", 7, 5)]
    message = found[0].message.replace("\\", "/")
    assert message.startswith("task 'load_orders' writes with .to_sql(..., if_exists='append') in its body (")
    assert "dags/tasks/load.py:9)" in message and not found[0].fixable


def test_a_write_in_an_imported_python_callable_is_reported_at_the_operator(tmp_path):
    found = _dg201(tmp_path, '    PythonOperator(task_id="customers", python_callable=load_customers)',
                   names="load_customers")
    assert [(f.line, f.column) for f in found] == [(7, 5)]
    assert "task 'customers' writes with .to_sql(" in found[0].message
    assert "dags/tasks/load.py:14)" in found[0].message.replace("\\", "/")


def test_an_imported_callable_keyed_on_its_interval_is_silent(tmp_path):
    assert _dg201(tmp_path, '    PythonOperator(task_id="customers", python_callable=load_keyed)',
                  names="load_keyed") == []


def test_an_imported_writer_named_as_one_is_reported_with_its_body(tmp_path):
    found = _dg201(tmp_path, '    PythonOperator(task_id="metrics", python_callable=push_metrics)',
                   names="push_metrics")
    assert len(found) == 1 and found[0].message.startswith("task 'metrics' (its body: ")
    assert "is named as a write, calls a write-like method" in found[0].message


def test_noqa_on_the_call_silences_it_and_the_module_itself_has_no_finding(tmp_path):
    assert _dg201(tmp_path, "    load_orders()  # noqa: DG201") == []


def test_a_dag_without_a_recurring_schedule_is_not_judged(tmp_path):
    assert _dg201(tmp_path, "    load_orders()", schedule="None") == []
