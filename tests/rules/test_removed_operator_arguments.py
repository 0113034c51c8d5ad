"""DG109 on every operator: BaseOperator rejects the arguments Airflow 3 removed, whichever
package the operator class comes from; what is not an operator stays silent."""

from __future__ import annotations

import textwrap

from tests.lint_helpers import lint


def _dg109(findings):
    return sorted((f.line, f.message) for f in findings if f.code == "DG109")


def test_task_concurrency_on_project_and_third_party_operators(tmp_path):
    found = _dg109(lint(tmp_path, """
        from airflow.sdk import DAG, BaseOperator
        from acme_provider.operators.load import SomeProviderOperator

        class MyCompanyOperator(BaseOperator):
            def __init__(self, table, **kwargs):
                super().__init__(**kwargs)

        class Exporter(MyCompanyOperator):
            pass

        with DAG("d", schedule=None):
            MyCompanyOperator(task_id="a", table="t", task_concurrency=2)
            SomeProviderOperator(task_id="b", task_concurrency=2)
            Exporter.partial(task_id="c", table="t", task_concurrency=2).expand(x=[1])

        def factory():
            # No DAG here: a class of this file deriving from an operator is still one.
            return MyCompanyOperator(task_id="e", table="t", task_concurrency=3)
    """))
    assert [line for line, _ in found] == [13, 14, 15, 19]
    assert all("passes task_concurrency, which Airflow 3 rejects with a TypeError" in m for _, m in found)


def test_what_is_no_operator_stays_silent(tmp_path):
    found = _dg109(lint(tmp_path, """
        from airflow.sdk import DAG, BaseOperator
        from mylib import Thing
        from airflow.providers.google.cloud.hooks.dataproc import DataProcJobBuilder

        def make_task(**kwargs):
            return kwargs

        class OwnConcurrency(BaseOperator):
            def __init__(self, task_concurrency=1, **kwargs):
                super().__init__(**kwargs)

        class Popping(BaseOperator):
            def __init__(self, **kwargs):
                self.limit = kwargs.pop("task_concurrency", None)
                super().__init__(**kwargs)

        class Plain:
            def __init__(self, **kwargs):
                pass

        with DAG("d", schedule=None):
            make_task(task_id="a", task_concurrency=2)
            Thing(task_id="b", task_concurrency=2)
            OwnConcurrency(task_id="c", task_concurrency=2)
            Popping(task_id="d", task_concurrency=2)
            Plain(task_id="e", task_concurrency=2)
            DataProcJobBuilder(task_id="f", task_concurrency=2)
    """))
    assert found == []


def test_project_operator_classes_are_read_through_the_project_index(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "__init__.py").write_text("")
    (tmp_path / "plugins" / "ops.py").write_text(textwrap.dedent("""
        from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
        from airflow.sdk import BaseOperator

        class Exporter(BaseOperator):
            pass

        class Trigger(TriggerDagRunOperator):
            pass

        class Taking(BaseOperator):
            def __init__(self, task_concurrency=None, **kwargs):
                super().__init__(**kwargs)

        def build(**kwargs):
            return Exporter(**kwargs)
    """))
    found = _dg109(lint(tmp_path, """
        from airflow.sdk import DAG
        from plugins.ops import Exporter, Taking, Trigger, build

        with DAG("d", schedule=None):
            Exporter(task_id="a", task_concurrency=2)
            Trigger(task_id="b", trigger_dag_id="x", execution_date="{{ ds }}")
            Exporter(task_id="c", execution_date="{{ ds }}")
            Taking(task_id="d", task_concurrency=2)
            build(task_id="e", task_concurrency=2)
    """, name="dags/d.py"))
    assert [line for line, _ in found] == [6, 7]
    assert "passes execution_date" in found[1][1]


def test_external_task_marker_execution_date_is_renamed(tmp_path):
    code = """
        from airflow.providers.standard.sensors.external_task import ExternalTaskMarker, ExternalTaskSensor
        from airflow.sdk import DAG

        with DAG("d", schedule=None):
            ExternalTaskMarker(task_id="m", external_dag_id="x", external_task_id="y", execution_date="{{ ds }}")
            ExternalTaskSensor(task_id="s", external_dag_id="x", execution_date_fn=lambda d: [d])
    """
    found = lint(tmp_path, code)
    assert [(f.line, f.help) for f in found if f.code == "DG109"] == [(6, "use logical_date=...")]


def test_operators_of_any_package_made_in_a_factory_function(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "__init__.py").write_text("")
    (tmp_path / "plugins" / "ops.py").write_text(textwrap.dedent("""
        from airflow.sdk import BaseOperator

        class Exporter(BaseOperator):
            pass
    """))
    found = _dg109(lint(tmp_path, """
        from acme_provider.operators.load import SomeProviderOperator
        from mylib import Thing
        from plugins.ops import Exporter

        def tasks(dag):
            SomeProviderOperator(task_id="a", task_concurrency=2, dag=dag)
            Exporter(task_id="b", task_concurrency=2)
            Thing(task_id="c", task_concurrency=2, dag=dag)
    """, name="dags/factory.py"))
    assert [line for line, _ in found] == [7, 8]
