"""Issue 21, item 10: a DAG made to be a SubDAG (`SubDagOperator(subdag=...)`) is run by its
parent's task and never scheduled by itself: the schedule rules stay silent on it."""

from __future__ import annotations

import textwrap

import pytest

from tests.lint_helpers import lint

SCHEDULE_RULES = {"DG101", "DG102", "DG103", "DG105", "DG107"}

PARENT = """\
import datetime

from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.subdag import SubDagOperator

ARGS = {"owner": "data", "start_date": datetime.datetime(2024, 1, 1)}
"""

# name -> code after PARENT; in each, the SubDAG is the DAG with "section" in its id.
SUBDAGS = {
    "factory_of_the_file": """
def section(dag_id, args):
    made = DAG(dag_id, default_args=args)
    BashOperator(task_id="work", bash_command="echo", dag=made)
    return made

with DAG("parent", default_args=ARGS, schedule="@daily", catchup=False, max_active_runs=1,
         max_active_tasks=2):
    SubDagOperator(task_id="section", subdag=section("parent.section", ARGS))
""",
    "factory_call_through_a_variable": """
def section(dag_id, args):
    return DAG(dag_id, default_args=args)

parent = DAG("parent", default_args=ARGS, schedule="@daily", catchup=False, max_active_runs=1,
             max_active_tasks=2)
child = section("parent.section", ARGS)
SubDagOperator(task_id="section", subdag=child, dag=parent)
""",
    "factory_returning_another_factory": """
def build(dag_id, args):
    return DAG(dag_id, default_args=args)

def section(parent_id, args):
    return build(parent_id + "_section", args)

with DAG("parent", default_args=ARGS, schedule="@daily", catchup=False, max_active_runs=1,
         max_active_tasks=2):
    SubDagOperator(task_id="section", subdag=section("parent", ARGS))
""",
    "dag_made_inline": """
with DAG("parent", default_args=ARGS, schedule="@daily", catchup=False, max_active_runs=1,
         max_active_tasks=2):
    SubDagOperator(task_id="section", subdag=DAG("parent.section", default_args=ARGS))
""",
    "dag_in_a_variable": """
child = DAG("parent.section", default_args=ARGS)
with DAG("parent", default_args=ARGS, schedule="@daily", catchup=False, max_active_runs=1,
         max_active_tasks=2):
    SubDagOperator(task_id="section", subdag=child)
""",
}


@pytest.mark.parametrize("version", ["2", "3"])
@pytest.mark.parametrize("case", sorted(SUBDAGS))
def test_schedule_rules_are_silent_on_a_subdag(tmp_path, case, version):
    findings = lint(tmp_path, PARENT + SUBDAGS[case], airflow_version=version)
    flagged = [(f.code, f.dag_id) for f in findings if f.code in SCHEDULE_RULES]
    assert flagged == [], flagged


# A factory module linted without its callers: the SubDAG convention's id says what it is for.
FACTORY_MODULE = """\
from airflow import DAG


def load_subdag(parent_dag_name, child_dag_name, args):
    return DAG(dag_id={dag_id}, default_args=args)
"""


@pytest.mark.parametrize("dag_id", [
    'f"{parent_dag_name}.{child_dag_name}"',
    'parent_dag_name + "." + child_dag_name',
    '"%s.%s" % (parent_dag_name, child_dag_name)',
    '"{}.{}".format(parent_dag_name, child_dag_name)',
    "'{0}.{1}'.format(parent_dag_name, child_dag_name)",
    '".".join([parent_dag_name, child_dag_name])',
])
def test_a_factory_named_like_a_subdag_is_one(tmp_path, dag_id):
    findings = lint(tmp_path, FACTORY_MODULE.format(dag_id=dag_id), airflow_version="2")
    assert [f.code for f in findings if f.code in SCHEDULE_RULES] == []


@pytest.mark.parametrize("dag_id", [
    'f"{parent_dag_name}_{child_dag_name}"',   # no dot: a factory of ordinary DAGs
    '"team.orders"',                           # a dotted id nobody's caller builds
    'f"team.{child_dag_name}"',                # the part before the dot is fixed
    '"%s.%s" % ("team", child_dag_name)',
    '"{}.{}".format("team", child_dag_name)',
])
def test_other_factories_still_need_a_schedule(tmp_path, dag_id):
    findings = lint(tmp_path, FACTORY_MODULE.format(dag_id=dag_id))
    assert "DG105" in [f.code for f in findings]


def test_a_dotted_id_at_module_level_still_needs_a_schedule(tmp_path):
    findings = lint(tmp_path, PARENT + 'PREFIX = "team"\nDAG(f"{PREFIX}.orders", default_args=ARGS)\n')
    assert "DG105" in [f.code for f in findings]


def test_the_parent_is_still_checked(tmp_path):
    code = PARENT + """
def section(dag_id, args):
    return DAG(dag_id, default_args=args)

with DAG("parent", default_args=ARGS):
    SubDagOperator(task_id="section", subdag=section("parent.section", ARGS))
"""
    findings = lint(tmp_path, code)
    assert [(f.code, f.dag_id) for f in findings if f.code == "DG105"] == [("DG105", "parent")]


def test_a_factory_from_another_module_called_as_subdag(tmp_path):
    # The caller's file makes the factory's DAG at the call: it is the SubDAG there too.
    (tmp_path / "subdags").mkdir()
    (tmp_path / "subdags" / "__init__.py").write_text("")
    (tmp_path / "subdags" / "load.py").write_text(textwrap.dedent("""\
        from airflow import DAG


        def build(dag_id, args):
            return DAG(dag_id=dag_id, default_args=args)
    """))
    code = PARENT + """
from subdags.load import build

parent = DAG("parent", default_args=ARGS, schedule="@daily", catchup=False, max_active_runs=1,
             max_active_tasks=2)
SubDagOperator(task_id="section", subdag=build("parent.section", ARGS), dag=parent)
other = build("orders", ARGS)
"""
    findings = lint(tmp_path, code, airflow_version="2")
    flagged = sorted({(f.code, f.dag_id) for f in findings if f.code in SCHEDULE_RULES})
    # The same factory's DAG that no SubDagOperator takes is an ordinary DAG.
    assert flagged and all(dag_id == "orders" for _, dag_id in flagged), flagged
