"""`@dag.task` on a DAG object registers a TaskFlow task, as `@task(dag=dag)` does."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from dagguard.model.dags.builder import build_file_model
from tests.lint_helpers import lint

INSERT_ROWS = """\
from airflow.sdk import DAG
from airflow.providers.sqlite.hooks.sqlite import SqliteHook
with DAG("d", schedule="@daily") as dag:
    @{decorator}
    def insert():
        SqliteHook().insert_rows(table="t", rows=[(1,)])
    insert()
"""


def task_findings(found) -> list:
    return [(f.code, f.line) for f in found if f.code.startswith("DG2")]


def file_model(code: str):
    return build_file_model(cst.parse_module(textwrap.dedent(code)))


@pytest.mark.parametrize("decorator", ["dag.task", 'dag.task(task_id="load")', "task"])
def test_a_dag_task_function_body_is_analysed_like_a_task(tmp_path, decorator):
    code = INSERT_ROWS.format(decorator=decorator)
    if decorator == "task":
        code = code.replace("import DAG\n", "import DAG, task\n")
    found = lint(tmp_path, code)
    assert task_findings(found) == [("DG201", 6)]


def test_clock_reads_and_removed_keys_in_a_dag_task_are_found(tmp_path):
    found = lint(tmp_path, """\
        import datetime
        from airflow.sdk import DAG
        with DAG("d", schedule="@daily") as dag:
            @dag.task
            def report(**context):
                return datetime.datetime.now(), context["execution_date"]
            report()
    """)
    assert sorted(task_findings(found)) == [("DG202", 6), ("DG205", 6)]


@pytest.mark.parametrize("code", [
    'dag = DAG("d", schedule=None)\n@dag.task(task_id="load")\ndef insert():\n    pass\ninsert()\n',
    # The decorator's own call, with its task_id, is not a second (operator) task.
    'with DAG("d", schedule=None) as dag:\n    @dag.task(task_id="load")\n    def insert():\n        pass\n'
    '    insert()\n',
    # Nor is `@task(task_id=...)`'s.
    'with DAG("d", schedule=None):\n    @task(task_id="load")\n    def insert():\n        pass\n    insert()\n',
])
def test_a_decorated_function_is_one_taskflow_task_of_its_dag(code):
    model = file_model("from airflow.sdk import DAG, task\n" + code)
    (task,) = model.dags[0].tasks
    assert (task.task_id, task.kind, task.callable.name.value) == ("load", "taskflow", "insert")


@pytest.mark.parametrize("code", [
    # Not a DAG: an object that happens to be named dag...
    "from mylib import dag\nwith DAG('d') as d:\n    @dag.task\n    def f():\n        pass\n    f()\n",
    "dag = Builder()\nwith DAG('d'):\n    @dag.task\n    def f():\n        pass\n    f()\n",
    # ...or the @dag decorator itself, inside the function it decorates.
    "from airflow.sdk import dag\n@dag\ndef d():\n    @dag.task\n    def f():\n        pass\n    f()\nd()\n",
])
def test_task_attribute_of_something_else_is_not_a_task(code):
    model = file_model("from airflow.sdk import DAG\n" + code)
    assert [t.task_id for d in model.dags for t in d.tasks] == []


def test_the_dag_an_at_dag_function_returns_takes_tasks_too():
    model = file_model("""\
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.sdk import dag

        @dag(schedule="@daily")
        def nightly():
            BashOperator(task_id="inside", bash_command="echo")

        d = nightly()
        BashOperator(task_id="by_argument", bash_command="echo", dag=d)

        @d.task
        def by_decorator():
            return 1

        by_decorator()
        other = len([])
        BashOperator(task_id="elsewhere", bash_command="echo", dag=other)
    """)
    [nightly] = model.dags
    assert sorted(task.task_id for task in nightly.tasks) == ["by_argument", "by_decorator", "inside"]
