"""Every finding that belongs to a DAG carries its dag_id in the JSON output: DAG-level ones,
task-level ones (wherever the task's code is written), and parse-time reads inside a DAG."""

from __future__ import annotations

import json
import textwrap

from dagguard.api import check_paths
from dagguard.config import Settings
from dagguard.report import formatter
from tests.lint_helpers import NOW

SOURCE = '''\
import datetime
from airflow.models import Variable
from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, dag, task

TOP = Variable.get("top")  # module level: no DAG


@task
def stamp():
    return datetime.datetime.now()  # in the task of 'hourly' below


def shared_clock():
    return datetime.datetime.now()  # the callable of tasks in two DAGs


with DAG("hourly", schedule="@hourly", max_active_runs=1, max_active_tasks=1) as hourly:
    TABLE = Variable.get("table")
    BashOperator(task_id="load", bash_command="echo")
    BashOperator(task_id="load", bash_command="echo")
    stamp()
    PythonOperator(task_id="clock", python_callable=shared_clock)

BashOperator(task_id="late", bash_command="echo", dag=hourly)
BashOperator(task_id="late", bash_command="echo", dag=hourly)


@dag(schedule="@daily", max_active_runs=1, max_active_tasks=1)
def nightly():
    Variable.get("nightly_table")
    PythonOperator(task_id="clock", python_callable=shared_clock)


nightly()
'''


def findings(tmp_path) -> list[dict]:
    target = tmp_path / "dags.py"
    target.write_text(SOURCE, encoding="utf-8")
    result = check_paths([target], settings=Settings(config_path=tmp_path / "pyproject.toml"), now=NOW)
    return json.loads(formatter("json")(result, False))


def by_line(found: list[dict], text: str, code: str) -> list[dict]:
    lines = {number for number, content in enumerate(SOURCE.splitlines(), 1) if text in content}
    return [f for f in found if f["line"] in lines and f["code"] == code]


def test_task_level_and_parse_time_findings_carry_their_dags_id(tmp_path):
    found = findings(tmp_path)
    expected = [
        ('TABLE = Variable.get("table")', "DG301", "hourly"),
        ('BashOperator(task_id="load"', "DG303", "hourly"),
        ('BashOperator(task_id="late"', "DG303", "hourly"),
        ("return datetime.datetime.now()  # in the task", "DG202", "hourly"),
        ('Variable.get("nightly_table")', "DG301", "nightly"),
    ]
    for text, code, dag_id in expected:
        matched = by_line(found, text, code)
        assert matched and all(f["dag_id"] == dag_id for f in matched), (text, code, matched)


def test_findings_outside_any_dag_or_in_code_two_dags_share_have_none(tmp_path):
    found = findings(tmp_path)
    [top] = by_line(found, 'TOP = Variable.get("top")', "DG301")
    assert top["dag_id"] is None
    [shared] = by_line(found, "return datetime.datetime.now()  # the callable", "DG202")
    assert shared["dag_id"] is None


def test_a_dag_with_a_finding_on_a_task_is_not_counted_clean(tmp_path):
    target = tmp_path / "dags.py"
    target.write_text(textwrap.dedent('''\
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.sdk import DAG

        with DAG("dupes", schedule=None):
            BashOperator(task_id="load", bash_command="echo")
            BashOperator(task_id="load", bash_command="echo")

        with DAG("fine", schedule=None):
            BashOperator(task_id="load", bash_command="echo")
    '''), encoding="utf-8")
    result = check_paths([target], settings=Settings(config_path=tmp_path / "pyproject.toml"), now=NOW)
    assert [f.code for f in result.findings] == ["DG303"]
    assert (result.dag_count, result.clean_dag_count) == (2, 1)


HELPERS = '''\
import datetime
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG


def stamp_rows():
    return datetime.datetime.now()  # a helper of one DAG's task


def shared_stamp():
    return datetime.datetime.now()  # a helper of two DAGs' tasks


def lookback():
    return (datetime.datetime.now() - datetime.timedelta(days=1)).isoformat()  # a parse-time argument's helper


def load(since):
    stamp_rows()
    shared_stamp()


def archive():
    shared_stamp()


with DAG("loader", schedule="@daily", max_active_runs=1, max_active_tasks=1):
    PythonOperator(task_id="load", python_callable=load, op_kwargs={"since": lookback()})

with DAG("archiver", schedule="@daily", max_active_runs=1, max_active_tasks=1):
    PythonOperator(task_id="archive", python_callable=archive)
'''


def test_a_helper_that_one_dags_tasks_call_belongs_to_that_dag(tmp_path):
    target = tmp_path / "dags.py"
    target.write_text(HELPERS, encoding="utf-8")
    result = check_paths([target], settings=Settings(config_path=tmp_path / "pyproject.toml"), now=NOW)
    found = json.loads(formatter("json")(result, False))
    lines = HELPERS.splitlines()
    owners = {lines[f["line"] - 1].split("# ")[-1]: f["dag_id"] for f in found if f["code"] == "DG202"}
    assert owners == {"a helper of one DAG's task": "loader", "a helper of two DAGs' tasks": None,
                      "a parse-time argument's helper": "loader"}
