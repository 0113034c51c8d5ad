"""DAG arguments set as attributes after the DAG is made (issue 21, F8)."""

from __future__ import annotations

import datetime as dt
import textwrap

import libcst as cst

from dagguard.model.dags.builder import build_file_model
from dagguard.model.basics.values import UNKNOWN
from tests.lint_helpers import lint


def _dags(code: str):
    return {dag.dag_id: dag for dag in build_file_model(cst.parse_module(textwrap.dedent(code))).dags}


def test_module_level_assignments_after_the_dag_set_its_arguments():
    dags = _dags("""
        from datetime import datetime
        from airflow import DAG

        dag = DAG("assigned", schedule_interval="@daily", start_date=datetime(2022, 1, 1))
        dag.catchup = False
        dag.max_active_runs = 1

        with DAG("context", schedule_interval="@daily", catchup=True) as ctx:
            ctx.end_date = datetime(2022, 2, 1)
            ctx.max_active_tasks = 4

        maybe = DAG("maybe", schedule_interval="@daily")
        if datetime.now().day == 1:
            maybe.catchup = True

        def later():
            maybe.max_active_runs = 3

        gone = DAG("gone", schedule_interval="@daily")
        gone = object()
        gone.catchup = False

        before = DAG("before", schedule_interval="@daily")
        before.description = "not read as a DAG argument"
    """)
    assigned = dags["assigned"].args
    assert (assigned.get("catchup").value, assigned.get("max_active_runs").value) == (False, 1)
    context = dags["context"].args
    assert context.get("end_date").value == dt.datetime(2022, 2, 1, tzinfo=dt.timezone.utc)
    assert (context.get("max_active_tasks").value, context.get("catchup").value) == (4, True)
    maybe = dags["maybe"].args
    assert maybe.get("catchup").value is UNKNOWN and maybe.get("max_active_runs").value is UNKNOWN
    assert "catchup" not in dags["gone"].args   # the name no longer holds the DAG
    assert "description" not in dags["before"].args


def test_dg101_reads_catchup_set_after_the_dag_on_airflow_2(tmp_path):
    found = [f.line for f in lint(tmp_path, """
        from datetime import datetime
        from airflow import DAG

        dag = DAG("cleanup", schedule_interval="@daily", start_date=datetime(2022, 1, 1))
        dag.catchup = False

        with DAG("ctx", schedule_interval="@daily", start_date=datetime(2022, 1, 1)) as ctx:
            ctx.catchup = False

        branch = DAG("branch", schedule_interval="@daily", start_date=datetime(2022, 1, 1))
        if datetime.now().year > 2000:
            branch.catchup = False

        late = DAG("late", schedule_interval="@daily", start_date=datetime(2022, 1, 1))
        late.catchup = True

        plain = DAG("plain", schedule_interval="@daily", start_date=datetime(2022, 1, 1))
    """, airflow_version="2") if f.code == "DG101"]
    # `late` is reported at its assignment; `plain` takes Airflow 2's default catchup=True.
    assert found == [16, 18]
