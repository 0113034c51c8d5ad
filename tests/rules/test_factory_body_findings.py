"""Issue 25, item 3: a risky value a factory's body makes is one cause, reported once, at the body
(the line to change), naming the calls whose DAGs it makes; and a factory's local dict changed in
place (`args["start_date"] = ...`) is read with its changes."""

from __future__ import annotations

from tests.lint_helpers import lint

FACTORY = """\
import pendulum
from airflow import DAG


def make(name):
    default_args = {"owner": "x", "start_date": pendulum.yesterday("UTC")}
    return DAG(name, default_args=default_args, schedule="@daily", max_active_runs=1, max_active_tasks=2)


for n in ["a", "b"]:
    globals()[n] = make(n)

c = make("c")
"""


def test_a_factory_body_value_is_one_finding_at_the_body_naming_its_calls(tmp_path):
    found = [f for f in lint(tmp_path, FACTORY) if f.code == "DG104"]
    assert [(f.line, f.column) for f in found] == [(6, 35)]
    assert found[0].message.startswith("DAG (as made by the calls on lines 11 and 13) start_date comes from "
                                       "pendulum.yesterday()")


def test_the_dags_the_calls_make_are_not_counted_clean(tmp_path):
    from dagguard.api import check_paths
    from dagguard.config import Settings
    from tests.lint_helpers import NOW

    (tmp_path / "dag.py").write_text(FACTORY)
    result = check_paths([tmp_path / "dag.py"], settings=Settings(config_path=tmp_path / "pyproject.toml"), now=NOW)
    assert len(result.findings) == 1
    assert result.clean_dag_count == 0


def test_a_factory_imported_from_another_module_is_reported_at_each_call(tmp_path):
    (tmp_path / "factory.py").write_text(FACTORY.split("\n\nfor n")[0] + "\n")
    found = [f for f in lint(tmp_path, 'from factory import make\n\na = make("a")\nb = make("b")\n') if f.code == "DG104"]
    assert [f.line for f in found] == [3, 4]


def test_a_local_dict_changed_in_place_in_the_factory(tmp_path):
    code = """\
    from airflow import DAG
    from airflow.utils.dates import days_ago

    BASE = {"owner": "x"}


    def make(name):
        args = dict(BASE)
        args["start_date"] = days_ago(1)
        args["catchup"] = True
        return DAG(name, default_args=args, schedule="@daily", max_active_runs=1, max_active_tasks=2)


    a = make("a")
    """
    found = [f for f in lint(tmp_path, code) if f.code == "DG104"]
    assert [(f.line, f.message.split(" start_date")[0]) for f in found] == [(9, "DAG (as made by the call on line 14)")]


def test_a_change_under_an_if_is_joined(tmp_path):
    code = """\
    import os
    import pendulum
    from airflow import DAG


    def make(name):
        args = {"owner": "x", "start_date": pendulum.datetime(2026, 1, 1, tz="UTC")}
        if os.environ.get("FRESH"):
            args["start_date"] = pendulum.now("UTC")
        return DAG(name, default_args=args, schedule="@daily", max_active_runs=1, max_active_tasks=2)


    a = make("a")
    """
    # Either value may reach the DAG: the start date is not known, so nothing is claimed of it.
    assert [f for f in lint(tmp_path, code) if f.code == "DG104"] == []
