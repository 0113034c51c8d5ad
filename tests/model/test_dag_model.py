"""The DAG model on tricky inputs: aliases, factories, default_args, decorators, task groups."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from dagguard.model.dags.builder import build_file_model
from dagguard.model.basics.values import UNKNOWN


def model(code: str):
    return build_file_model(cst.parse_module(textwrap.dedent(code)))


@pytest.mark.parametrize("code", [
    "from airflow import DAG as D\nd = D('x')\n",
    "import airflow.models as am\nd = am.DAG('x')\n",
    "import airflow\nd = airflow.DAG('x')\n",
    "import airflow.sdk\nwith airflow.sdk.DAG('x'):\n    pass\n",
    "from airflow.models.dag import DAG\nwith DAG(dag_id='x'):\n    pass\n",
    "from airflow.sdk import dag\n@dag(dag_id='x')\ndef f():\n    pass\n",
    "from airflow.decorators import dag as make\n@make\ndef x():\n    pass\n",
    "from airflow.models.dag import dag\n@dag(dag_id='x')\ndef f():\n    pass\n",
    "from airflow import dag\n@dag\ndef x():\n    pass\n",
    "try:\n    from airflow.sdk import DAG\nexcept ImportError:\n    from airflow import DAG\nDAG('x')\n",
])
def test_airflow_dags_are_found_through_any_import(code):
    dags = model(code).dags
    assert [d.dag_id for d in dags] == ["x"]


@pytest.mark.parametrize("code", [
    "from buildgraph import DAG\nDAG('x')\n",
    "class DAG:\n    pass\nDAG('x')\n",
    "from airflow import DAG\ndef DAG(*a):\n    pass\nDAG('x')\n",
    "DAG('x')\n",
    "import buildgraph\nbuildgraph.DAG('x')\n",
    "from airflow.sdk import task\n@task\ndef x():\n    pass\n",
])
def test_other_dag_names_are_not_dags(code):
    assert model(code).dags == []


def test_dag_factory_in_a_loop_yields_one_dag_with_unknown_id():
    dags = model("""
        from airflow.sdk import DAG
        for name in ["a", "b"]:
            with DAG(f"load_{name}", schedule=None):
                pass
    """).dags
    assert len(dags) == 1 and dags[0].dag_id is None


def test_two_dags_in_one_file_keep_their_own_tasks():
    dags = model("""
        from airflow.sdk import DAG
        from airflow.providers.standard.operators.empty import EmptyOperator
        with DAG("first"):
            EmptyOperator(task_id="a")
        with DAG("second"):
            EmptyOperator(task_id="b")
            EmptyOperator(task_id="c")
    """).dags
    assert [(d.dag_id, [t.task_id for t in d.tasks]) for d in dags] == [("first", ["a"]), ("second", ["b", "c"])]


def test_default_args_resolve_through_names_dict_calls_and_merges():
    dags = model("""
        from datetime import datetime, timedelta
        from airflow.sdk import DAG
        BASE = dict(owner="data", retries=2)
        EXTRA = {**BASE, "end_date": datetime(2026, 1, 1)}
        dag = DAG("x", default_args={**EXTRA, "retry_delay": timedelta(minutes=5)})
    """).dags
    default_args = dags[0].default_args
    assert default_args.complete
    assert default_args.get("owner").value == "data"
    assert default_args.get("retries").value == 2
    assert default_args.get("end_date").value.year == 2026
    assert default_args.get("retry_delay").value.total_seconds() == 300


def test_splat_of_a_module_dict_adds_arguments_and_unknown_splat_makes_them_incomplete():
    known, unknown = model("""
        from airflow.sdk import DAG
        from elsewhere import settings
        LIMITS = {"max_active_runs": 1}
        DAG("a", **LIMITS)
        DAG("b", **settings)
    """).dags
    assert known.args.get("max_active_runs").value == 1 and known.args.complete
    assert not unknown.args.complete and not unknown.surely_lacks("max_active_runs")


def test_unresolvable_values_are_unknown_not_guessed():
    dag = model("""
        from airflow.sdk import DAG
        from config import START
        DAG("x", start_date=START, schedule=compute())
    """).dags[0]
    assert dag.args.get("start_date").value is UNKNOWN
    assert dag.args.get("schedule").value is UNKNOWN


def test_dag_decorator_without_parentheses_uses_the_function_name():
    dag = model("""
        from airflow.sdk import dag
        @dag
        def my_pipeline():
            pass
        my_pipeline()
    """).dags[0]
    assert dag.dag_id == "my_pipeline" and dag.kind == "decorator" and dag.call is None


def test_positional_dag_id_and_keyword_dag_id():
    assert [d.dag_id for d in model("""
        from airflow.sdk import DAG, dag
        DAG("positional")
        DAG(dag_id="keyword")
        @dag("decorated_positional")
        def f():
            pass
    """).dags] == ["positional", "keyword", "decorated_positional"]


def test_tasks_attach_through_dag_keyword_and_context():
    dag = model("""
        from airflow import DAG
        from airflow.providers.standard.operators.bash import BashOperator
        dag = DAG("x")
        BashOperator(task_id="via_kwarg", bash_command="true", dag=dag)
        BashOperator(task_id="orphan", bash_command="true")
        with dag:
            BashOperator(task_id="via_with", bash_command="true")
    """).dags[0]
    assert [t.task_id for t in dag.tasks] == ["via_kwarg", "via_with"]
    assert dag.tasks[0].operator == "airflow.providers.standard.operators.bash.BashOperator"


def test_taskflow_calls_become_tasks_with_their_callable():
    dag = model("""
        from airflow.sdk import dag, task

        @task
        def extract():
            return 1

        @task(task_id="custom")
        def load(x):
            pass

        @dag(schedule=None)
        def pipeline():
            load(extract())
            extract.override(task_id="again")()
            load.partial(x=1).expand(y=[1, 2])
        pipeline()
    """).dags[0]
    tasks = [(t.task_id, t.kind, t.callable.name.value) for t in dag.tasks]
    assert tasks == [("custom", "taskflow", "load"), ("extract", "taskflow", "extract"),
                     ("again", "taskflow", "extract"), ("custom", "taskflow", "load")]


def test_python_operator_callable_resolves_to_the_local_function():
    task = model("""
        from airflow.providers.standard.operators.python import PythonOperator
        from airflow.sdk import DAG

        def export(**context):
            pass

        with DAG("x"):
            PythonOperator(task_id="export", python_callable=export)
    """).dags[0].tasks[0]
    assert task.callable is not None and task.callable.name.value == "export"


def test_task_groups_prefix_task_ids():
    dag = model("""
        from airflow.sdk import DAG, TaskGroup
        from airflow.providers.standard.operators.empty import EmptyOperator
        with DAG("x"):
            with TaskGroup("outer"):
                with TaskGroup(group_id="inner"):
                    EmptyOperator(task_id="a")
                with TaskGroup("flat", prefix_group_id=False):
                    EmptyOperator(task_id="b")
            with TaskGroup(make_name()):
                EmptyOperator(task_id="c")
    """).dags[0]
    assert [t.full_task_id for t in dag.tasks] == ["outer.inner.a", "outer.b", None]


def test_parse_time_calls_exclude_task_and_function_bodies():
    file = model("""
        from airflow.models import Variable
        from airflow.sdk import dag, task
        A = Variable.get("a")
        def helper():
            return Variable.get("b")
        @dag(schedule=None)
        def pipeline():
            c = Variable.get("c")
            @task
            def t():
                return Variable.get("d")
    """)
    reads = [c.node for c in file.parse_time_calls if isinstance(c.node.func, cst.Attribute)]
    assert [read.args[0].value.value for read in reads] == ['"a"', '"c"']
    # Calls of plain names are parse-time calls too (DG301 follows them into project functions).
    assert [c.node.func.value for c in file.parse_time_calls if isinstance(c.node.func, cst.Name)] == ["dag"]


@pytest.mark.parametrize("source", [
    '"abc"', "'a\\'b'", '"""x\ny"""', "r'a\\d'", "b'x'", "'''q'''", '""', "u'x'", "'tab\\there'",
    '"""a\r\nb"""',
])
def test_fast_string_values_match_python(source):
    from dagguard.model.basics.values import simple_string_value

    node = cst.parse_expression(source)
    assert simple_string_value(node) == node.evaluated_value


@pytest.mark.parametrize("calls", ["", "nightly()\n", "nightly()\nnightly()\n", "d = nightly()\n"])
def test_an_at_dag_function_is_one_dag_however_often_the_file_calls_it(tmp_path, calls):
    from tests.lint_helpers import codes, lint

    code = (
        "import pendulum\nfrom airflow.models.dag import dag\n\n"
        "@dag(schedule_interval='@daily', start_date=pendulum.now())\n"
        "def nightly():\n    pass\n\n" + calls
    )
    assert len(model(code).dags) == 1
    found = codes(lint(tmp_path, code))
    assert found.count("DG106") == 1 and found.count("DG104") == 1
    assert "DG302" not in found


@pytest.mark.parametrize("guard", [
    'if __name__ == "__main__":',
    "if '__main__' == __name__:",
    "if TYPE_CHECKING:",
    "if typing.TYPE_CHECKING:",
    "if t.TYPE_CHECKING:",
    "if TC:",
])
def test_code_the_dag_processor_never_runs_defines_no_dag_and_no_parse_time_call(guard):
    file = model(f"""
        import typing
        import typing as t
        from typing import TYPE_CHECKING
        from typing import TYPE_CHECKING as TC
        from airflow.models import Variable
        from airflow.sdk import DAG
        from airflow.providers.standard.operators.empty import EmptyOperator

        {guard}
            Variable.get("x")
            with DAG("debug_only"):
                EmptyOperator(task_id="a")
    """)
    assert file.dags == [] and file.parse_time_calls == []


def test_the_other_branch_of_an_import_guard_runs():
    file = model("""
        from airflow.sdk import DAG

        if __name__ != "__main__":
            with DAG("imported"):
                pass
        else:
            with DAG("script_only"):
                pass
        if __name__ == "__main__":
            pass
        else:
            with DAG("also_imported"):
                pass
    """)
    assert [d.dag_id for d in file.dags] == ["imported", "also_imported"]


def test_a_rebound_dunder_name_is_no_guard():
    file = model("""
        from airflow.sdk import DAG
        __name__ = "__main__"
        if __name__ == "__main__":
            with DAG("x"):
                pass
    """)
    assert [d.dag_id for d in file.dags] == ["x"]
