"""DG205 in templates built from pieces (+, f-strings, %, .format, module constants) and in
every method and callback Airflow calls with the run's context."""

from __future__ import annotations

import textwrap

from dagguard.api import fix_source
from tests.lint_helpers import NOW, lint


def _dg205(findings):
    return [(f.line, f.message) for f in findings if f.code == "DG205"]


def test_concatenated_and_formatted_templates(tmp_path):
    found = _dg205(lint(tmp_path, """
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.sdk import DAG

        OFFSET = -1
        START = "{{ macros.ds_add(next_execution_date.strftime('%Y-%m-%d'), "

        with DAG("report", schedule=None) as dag:
            x = dag.dag_id
            BashOperator(task_id="a", bash_command="echo {{ execution_date.replace(" + x + ").isoformat() }}")
            BashOperator(task_id="b", bash_command=START + str(OFFSET) + ") }}")
            BashOperator(task_id="c", bash_command=f"echo {{{{ prev_ds }}}} {x}")
            BashOperator(task_id="d", bash_command="echo {{ %s }} %s" % ("yesterday_ds", x))
            BashOperator(task_id="e", bash_command="echo {{{{ tomorrow_ds }}}} {}".format(x))
            BashOperator(task_id="f", bash_command="true", env={"DAY": "{{ next_ds }}" + x})
            BashOperator(task_id="g", bash_command=START + x + ") }}")
    """))
    assert found == [
        (6, found[0][1]), (10, found[1][1]), (12, found[2][1]), (13, found[3][1]), (14, found[4][1]),
        (15, found[5][1]),
    ]
    keys = ["next_execution_date", "execution_date", "prev_ds", "yesterday_ds", "tomorrow_ds", "next_ds"]
    assert [f"{{{{ {key} }}}}" in message for (_, message), key in zip(found, keys)] == [True] * 6
    assert "task 'b'" in found[0][1]   # the shared constant's piece, reported once


def test_what_is_not_a_jinja_variable_stays_silent(tmp_path):
    found = _dg205(lint(tmp_path, """
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.sdk import DAG

        with DAG("report", schedule=None) as dag:
            x = dag.dag_id
            BashOperator(task_id="a", bash_command="echo {{ params.execution_date }} " + x)
            BashOperator(task_id="b", bash_command="echo {{ 'execution_date' }} " + x)
            BashOperator(task_id="c", bash_command="echo execution_date " + x)
            BashOperator(task_id="d", bash_command=f"echo {x} {{{{ ds }}}}")
    """))
    assert found == []


def test_a_constant_of_a_project_module_is_read_and_reported_at_the_use(tmp_path):
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "__init__.py").write_text('PREFIX = "{{ execution_date.strftime("\n')
    found = lint(tmp_path, """
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.sdk import DAG
        from common import PREFIX

        with DAG("report", schedule=None) as dag:
            BashOperator(task_id="a", bash_command="echo " + PREFIX + dag.dag_id + ") }}")
    """, name="dags/report.py")
    assert [(f.line, f.code) for f in found if f.code == "DG205"] == [(7, "DG205")]


def test_the_piece_holding_the_name_is_fixed(tmp_path):
    code = """
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.sdk import DAG

        with DAG("report", schedule=None) as dag:
            BashOperator(task_id="a", bash_command="echo {{ execution_date.replace(" + dag.dag_id + ") }}")
    """
    found = lint(tmp_path, code)
    assert [f.code for f in found] == ["DG205"]
    fixed = fix_source(textwrap.dedent(code), unsafe_fixes=True, now=NOW)
    assert 'bash_command="echo {{ logical_date.replace(" + dag.dag_id + ") }}"' in fixed.fixed.decode()


def test_every_method_and_callback_that_receives_the_context(tmp_path):
    found = _dg205(lint(tmp_path, """
        from airflow.sdk import DAG, BaseOperator, get_current_context
        from airflow.providers.standard.operators.branch import BaseBranchOperator
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.providers.standard.sensors.python import PythonSensor

        class Pick(BaseBranchOperator):
            def choose_branch(self, ctx):
                return "a" if ctx["prev_ds"] else "b"

        class Wait(PythonSensor):
            def pre_execute(self, context):
                print(context["execution_date"])

            def post_execute(self, context, result=None):
                print(context["next_ds"])

            def on_kill(self):
                context = {"execution_date": 1}
                return context["execution_date"]

        def notify(context):
            return context["yesterday_ds"]

        def on_dag_failure(ctx):
            return ctx["tomorrow_ds"]

        def retried(context):
            return context["next_ds_nodash"]

        def unrelated(context):
            return context["execution_date"]

        def helper():
            context = get_current_context()
            return context["prev_ds_nodash"]

        with DAG("d", schedule=None, on_failure_callback=on_dag_failure,
                 default_args={"on_retry_callback": [retried]}):
            BashOperator(task_id="a", bash_command="true", on_success_callback=notify)
    """))
    assert [line for line, _ in found] == [9, 13, 16, 23, 26, 29, 36]
    assert "Pick.choose_branch()" in found[0][1]
    assert "on_success_callback notify()" in found[3][1]
    assert "on_failure_callback on_dag_failure()" in found[4][1]
    assert "on_retry_callback retried()" in found[5][1]
    assert "helper()" in found[6][1]


def test_a_dict_that_never_receives_the_context_stays_silent(tmp_path):
    found = _dg205(lint(tmp_path, """
        from airflow.sdk import DAG

        def build(context):
            return context["execution_date"]

        def plain(**kwargs):
            return kwargs["next_ds"]

        build({"execution_date": 1})

        with DAG("d", schedule=None, on_failure_callback=print):
            pass
    """))
    assert found == []


def test_methods_of_classes_deriving_from_project_and_third_party_operators(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "__init__.py").write_text("")
    (tmp_path / "plugins" / "base.py").write_text(textwrap.dedent("""
        from airflow.sdk import BaseOperator

        class CompanyBase(BaseOperator):
            pass
    """))
    found = _dg205(lint(tmp_path, """
        from acme_provider.operators import WarehouseOperator
        from plugins.base import CompanyBase
        from mylib import Exporter

        class Load(CompanyBase):
            def execute(self, context):
                return context["next_ds"]

        class Unload(WarehouseOperator):
            def poke(self, context):
                return context["prev_ds"]

        class NotAnOperator(Exporter):
            def execute(self, context):
                return context["next_ds"]
    """, name="dags/load.py"))
    assert [line for line, _ in found] == [8, 12]
    assert "Load.execute()" in found[0][1] and "Unload.poke()" in found[1][1]


def test_the_context_passed_on_to_a_helper_of_the_file(tmp_path):
    found = _dg205(lint(tmp_path, """
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.sdk import DAG, task

        def _send(message, context):
            return message, context.get("execution_date")

        def _options(**kwargs):
            return kwargs["next_ds"]

        def _also(message, stamp):
            return stamp["prev_ds"]

        def alert(context):
            _also("x", {"prev_ds": 1})
            return _send("failed", context), _options(**context)

        def tidy(**kwargs):
            return _options(retries=2), _send("x", {"execution_date": 1})

        with DAG("d", schedule=None, on_failure_callback=alert):
            BashOperator(task_id="a", bash_command="true")
            task(tidy)()
    """))
    assert [line for line, _ in found] == [6, 9]
    assert all("on_failure_callback alert()" in message for _, message in found)


def test_a_callback_of_a_project_module_is_reported_where_the_dag_names_it(tmp_path):
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "__init__.py").write_text("")
    (tmp_path / "common" / "alerts.py").write_text(textwrap.dedent("""
        def _send(message, context):
            return message, context.get("execution_date"), context["next_ds"]

        def fail_alert(context):
            return _send("failed", context)

        def not_a_callback(context):
            return context["prev_ds"]
    """))
    found = lint(tmp_path, """
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.sdk import DAG
        from common.alerts import fail_alert, not_a_callback

        with DAG("d", schedule=None, on_failure_callback=fail_alert):
            BashOperator(task_id="a", bash_command="true", on_retry_callback=[fail_alert])
        not_a_callback({})
    """, name="dags/d.py")
    reported = [(f.path.rsplit("/", 1)[-1], f.line, f.column, f.message) for f in found if f.code == "DG205"]
    # Once per file and key, at the first place the file names it (the task's list).
    assert [r[:3] for r in reported] == [("d.py", 7, 71), ("d.py", 7, 71)]
    assert "on_retry_callback fail_alert() (in common.alerts) reads the context key 'execution_date'" \
        in reported[0][3]
    assert "'next_ds'" in reported[1][3]
    assert not any(f.fixable for f in found if f.code == "DG205")


def test_the_piece_reading_the_variable_is_preferred_to_one_that_only_spells_it(tmp_path):
    found = lint(tmp_path, """
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.sdk import DAG

        with DAG("report", schedule=None) as dag:
            BashOperator(task_id="a", bash_command="echo execution_date= " + dag.dag_id
                                                   + " {{ execution_date }}")
    """)
    assert [f.line for f in found if f.code == "DG205"] == [7]   # not the first piece, on line 6


def test_templates_of_operators_made_in_a_factory_function(tmp_path):
    found = _dg205(lint(tmp_path, """
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator

        def make_tasks(dag, table):
            load = BashOperator(task_id="load", bash_command="load.sh {{ next_ds }} " + table, dag=dag)
            check = SQLExecuteQueryOperator(task_id="check", conn_id="db", dag=dag,
                                            sql="SELECT count(*) FROM t WHERE day = '{{ prev_ds }}'")
            return load >> check
    """))
    assert [line for line, _ in found] == [6, 8]
    assert "task 'load' uses {{ next_ds }} in bash_command" in found[0][1]


def test_a_fallback_behind_the_replacement_is_airflow_2_and_3_compatible(tmp_path):
    # Issue 21, F3: the removed key read only when its replacement is missing (Airflow 2) is
    # silent; read first, read with [], or as an eagerly evaluated [] default, it still fires.
    found = _dg205(lint(tmp_path, """
        from airflow.sdk import DAG, task

        with DAG("compat", schedule=None):
            @task
            def stamp(**context):
                a = context.get("logical_date") or context.get("execution_date")
                b = context.get("logical_date", context.get("execution_date"))
                if "execution_date" in context:
                    c = context["execution_date"]
                else:
                    c = context["logical_date"]
                d = context["next_ds"] if "next_ds" in context else context["data_interval_end"]
                e = context.get("data_interval_start") or context.get("execution_date") or 1
                return a, b, c, d, e

            @task
            def old(**kwargs):
                x = kwargs.get("execution_date")
                y = kwargs["execution_date"] or kwargs["logical_date"]
                z = kwargs.get("logical_date", kwargs["execution_date"])
                w = kwargs.get("ds") or kwargs.get("execution_date")
                if "execution_date" in kwargs:
                    v = kwargs["execution_date"]
                return x, y, z, w, v

            stamp()
            old()
    """))
    assert [line for line, _ in found] == [19, 20, 21, 22, 24]
    assert all("task 'old'" in message for _, message in found)


def test_a_fallback_in_a_callback_is_silent_too(tmp_path):
    found = _dg205(lint(tmp_path, """
        from airflow.providers.standard.operators.empty import EmptyOperator
        from airflow.sdk import DAG


        def notify(context):
            when = context.get("logical_date") or context.get("execution_date")
            print(when, context.get("next_execution_date"))


        with DAG("compat", schedule=None, default_args={"on_failure_callback": notify}):
            EmptyOperator(task_id="a")
    """))
    assert [line for line, _ in found] == [8]
    assert "next_execution_date" in found[0][1]
