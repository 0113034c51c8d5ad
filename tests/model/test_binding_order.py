"""Module-level names resolve to the bindings that can reach a use, in statement order."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from dagguard.model.dags.builder import build_file_model
from tests.lint_helpers import lint

PYSPARK = """\
import pendulum
from airflow.decorators import dag, task
@dag(schedule="@daily", start_date=pendulum.datetime(2021, 1, 1, tz="UTC"), catchup=False)
def example_pyspark():
    @task
    def t(): ...
    t()
{target} = example_pyspark()
"""


def file_model(code: str):
    return build_file_model(cst.parse_module(textwrap.dedent(code)))


def dag_ids(code: str) -> list:
    return [d.dag_id for d in file_model(code).dags]


@pytest.mark.parametrize("target", ["d", "dag"])
def test_rebinding_the_dag_decorator_after_use_keeps_the_dag(tmp_path, target):
    found = lint(tmp_path, PYSPARK.format(target=target))
    assert [(f.code, f.line) for f in found] == [("DG102", 3), ("DG103", 3)]


@pytest.mark.parametrize("code, expected", [
    # A later rebinding does not reach an earlier use...
    ("from airflow import DAG\nDAG('a')\nDAG = wrap(DAG)\nDAG('b')\n", ["a"]),
    # ...and an earlier binding is replaced by a later unconditional one.
    ("DAG = None\nfrom airflow import DAG\nDAG('x')\n", ["x"]),
    ("from airflow import DAG\nDAG = None\nDAG('x')\n", []),
    # A constant read before its rebinding has the value it had then.
    ("from airflow import DAG\nNAME = 'a'\nDAG(NAME)\nNAME = 'b'\n", ["a"]),
])
def test_module_statements_resolve_in_order(code, expected):
    assert dag_ids(code) == expected


@pytest.mark.parametrize("code", [
    # A binding in a branch may or may not have happened: both stay possible.
    "from airflow import DAG\nif flag:\n    DAG = other\nDAG('x')\n",
    # A function body runs later, when the module's last binding is in place.
    "from airflow import DAG\ndef make():\n    return DAG('x')\nDAG = other\n",
    "from airflow import DAG\nmake = lambda: DAG('x')\nDAG = other\n",
])
def test_order_that_cannot_be_decided_keeps_every_binding(code):
    assert dag_ids(code) == []


def test_a_constant_read_later_still_sees_the_bindings_of_its_own_time():
    # B's value is evaluated where B is used: A's older binding must not be hidden there.
    assert dag_ids("from airflow import DAG\nA = 'x'\nB = A + 'y'\nA = 'z'\nDAG(B)\n") == [None]


def test_try_except_imports_still_resolve():
    assert dag_ids("try:\n    from airflow.sdk import DAG\nexcept ImportError:\n"
                   "    from airflow import DAG\nDAG('x')\n") == ["x"]


def test_a_dag_variable_reaches_operators_in_later_statements():
    model = file_model("""\
        from airflow.sdk import DAG
        from airflow.providers.standard.operators.empty import EmptyOperator
        dag = DAG("d", schedule=None)
        EmptyOperator(task_id="a", dag=dag)
    """)
    assert [t.task_id for t in model.dags[0].tasks] == ["a"]


def test_task_arguments_are_read_where_the_task_is_called(tmp_path):
    # The DAG is made in statement 2; the constant the task passes is assigned after it.
    found = lint(tmp_path, """\
        from airflow.sdk import DAG
        dag = DAG("d", schedule="@daily")
        @dag.task
        def report(when):
            return when
        WHEN = "{{ execution_date }}"
        report(WHEN)
    """)
    assert [(f.code, f.line) for f in found if f.code == "DG205"] == [("DG205", 7)]
