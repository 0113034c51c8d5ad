"""Task code no DAG of the file holds: @task functions defined for other modules, operators made
outside a DAG, operator classes. What fails wherever it runs is reported there, once."""

from __future__ import annotations

from tests.lint_helpers import codes, lint


def test_only_operator_classes_have_their_execute_read_as_task_code(tmp_path):
    found = lint(tmp_path, """
        from airflow.sdk import BaseOperator
        from airflow.providers.standard.sensors.python import PythonSensor

        class Exporter:
            def execute(self, context):
                return context["next_ds"]

        class WaitForFile(PythonSensor):
            def poke(self, context):
                return context["prev_ds"]

        class WaitLonger(WaitForFile):
            def poke(self, context):
                return context.get("tomorrow_ds")
    """)
    messages = [f.message for f in found if f.code == "DG205"]
    assert len(messages) == 2
    assert "WaitForFile.poke()" in messages[0] and "'prev_ds'" in messages[0]
    assert "WaitLonger.poke()" in messages[1]


def test_a_dag_run_parameter_is_the_run(tmp_path):
    found = lint(tmp_path, """
        from airflow.sdk import task

        @task
        def manual_only(dag_run=None, run=None):
            return dag_run.external_trigger, run.external_trigger
    """)
    assert codes(found).count("DG205") == 1


def test_a_task_function_called_in_a_dag_is_reported_once(tmp_path):
    found = lint(tmp_path, """
        from airflow.sdk import DAG, task

        @task(start_date=None)
        def report(**context):
            return context["execution_date"]

        with DAG("report", schedule=None):
            report()
            report()
    """)
    assert codes(found).count("DG205") == 1
