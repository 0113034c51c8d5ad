"""Fixes on DAGs made by factories: fix runs resolve through the project index as `check`
does, and a keyword is added to a factory's call only when the factory passes it on to DAG()."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagguard.api import check_paths, check_stdin, fix_paths, fix_stdin
from dagguard.config import DeclaredFactory, Settings
from tests.lint_helpers import NOW

FACTORY = """\
import pendulum
from airflow.sdk import DAG

START = pendulum.datetime(2025, 1, 1, tz="UTC")


def create_dag(dag_id, schedule="@hourly", catchup=True, **kwargs):
    # **kwargs reach DAG(): the caller may pass any DAG keyword
    return DAG(dag_id, schedule=schedule, start_date=START, catchup=catchup, **kwargs)


def strict_dag(dag_id, schedule="@hourly"):
    return DAG(dag_id, schedule=schedule, start_date=START, catchup=False)


def hard_coded(dag_id, **kwargs):
    # catchup is set here: a caller's catchup= would be passed twice (TypeError)
    return DAG(dag_id, schedule="@hourly", start_date=START, catchup=True, max_active_runs=1,
               max_active_tasks=2, **kwargs)


def renamed(dag_id, cu=True, **kwargs):
    return DAG(dag_id, schedule="@hourly", start_date=START, catchup=cu, max_active_runs=1,
               max_active_tasks=2, **kwargs)
"""
ORDERS = """\
from common.factory import create_dag

dag = create_dag(
    "orders",
    max_active_tasks=2,  # set by hand
)
"""
STRICT = """\
from common.factory import strict_dag

dag = strict_dag("strict")
"""
HARD = """\
from common.factory import hard_coded, renamed

one = hard_coded("hard")
two = renamed("renamed")
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "dags" / "common").mkdir(parents=True)
    (tmp_path / "dags" / "common" / "__init__.py").write_text("")
    (tmp_path / "dags" / "common" / "factory.py").write_text(FACTORY)
    (tmp_path / "dags" / "orders.py").write_text(ORDERS)
    (tmp_path / "dags" / "strict.py").write_text(STRICT)
    (tmp_path / "dags" / "hard.py").write_text(HARD)
    return tmp_path


def _codes(findings, path: str) -> set[tuple[str, bool]]:
    return {(f.code, f.fixable) for f in findings if f.path.endswith(path)}


def test_check_marks_fixable_only_what_the_factory_passes_on(project):
    result = check_paths([project / "dags"], now=NOW)
    # create_dag forwards **kwargs and has a catchup parameter: both fixes go into the call.
    assert _codes(result.findings, "orders.py") == {("DG101", True), ("DG102", True)}
    # strict_dag takes neither keyword: the findings stay, with no fix.
    assert _codes(result.findings, "strict.py") == {("DG102", False), ("DG103", False)}
    # catchup is the factory's own (a literal, or a parameter of another name) beside **kwargs.
    assert _codes(result.findings, "hard.py") == {("DG101", False)}


def test_fix_adds_the_keywords_to_the_factory_call_and_a_recheck_is_clean(project):
    run = fix_paths([project / "dags"], unsafe_fixes=True, now=NOW)
    assert (project / "dags" / "orders.py").read_text() == ORDERS.replace(
        "    max_active_tasks=2,  # set by hand\n",
        "    max_active_tasks=2,  # set by hand\n    catchup=False,\n    max_active_runs=1,\n")
    assert (project / "dags" / "strict.py").read_text() == STRICT
    assert (project / "dags" / "hard.py").read_text() == HARD
    assert (project / "dags" / "common" / "factory.py").read_text() == FACTORY   # never the factory's file
    assert sorted(a.code for f in run.files for a in f.applied) == ["DG101", "DG102"]
    again = check_paths([project / "dags"], now=NOW)
    assert _codes(again.findings, "orders.py") == set()
    assert {f.code for f in again.findings} == {f.code for f in run.result.findings} == {"DG101", "DG102", "DG103"}


def test_a_fix_run_reports_what_check_reports(project):
    checked = check_paths([project / "dags"], now=NOW)
    diffed = fix_paths([project / "dags"], unsafe_fixes=False, write=False, now=NOW)   # DG101/DG102 are unsafe
    assert [(f.path, f.line, f.code, f.message) for f in diffed.result.findings] == \
        [(f.path, f.line, f.code, f.message) for f in checked.findings]


def test_stdin_resolves_the_factory_through_the_project(project):
    checked = check_stdin(ORDERS, project / "dags" / "orders.py", now=NOW)
    assert {f.code for f in checked.findings} == {"DG101", "DG102"}
    run = fix_stdin(ORDERS, project / "dags" / "orders.py", unsafe_fixes=True, now=NOW)
    assert "catchup=False,\n    max_active_runs=1,\n" in run.files[0].fixed.decode()
    assert run.result.findings == () and run.result.fixed == 2


def test_declared_factory_takes_the_keywords_its_declaration_names(tmp_path):
    dag = tmp_path / "vendor.py"
    dag.write_text("from vendor_platform import VendorDag\n\nd = VendorDag('v', cadence='@hourly')\n")
    settings = Settings(dag_factories=(DeclaredFactory(
        "vendor_platform.VendorDag", defaults=(("start_date", "2025-01-01"),),
        arguments=(("cadence", "schedule"), ("limit", "max_active_runs"))),))
    found = {f.code: f for f in check_paths([dag], settings=settings, now=NOW).findings}
    # max_active_runs is the declared parameter `limit`; max_active_tasks is not declared at all.
    assert found["DG102"].fix_description == "add limit=1" and found["DG103"].fix_safety is None
    fix_paths([dag], unsafe_fixes=True, settings=settings, now=NOW)
    assert dag.read_text().endswith("VendorDag('v', cadence='@hourly', limit=1)\n")
    assert {f.code for f in check_paths([dag], settings=settings, now=NOW).findings} == {"DG103"}


def test_in_file_factory_literal_is_fixed_on_its_own_dag_not_for_a_caller(tmp_path):
    # The True is written in the factory's DAG(...): that DAG's finding flips it there; the
    # caller's finding has no fix of its own (its call cannot take catchup=).
    dag = tmp_path / "local.py"
    source = ("import pendulum\nfrom airflow.sdk import DAG\n\n\ndef make(dag_id):\n"
              "    return DAG(dag_id, schedule='@daily', start_date=pendulum.datetime(2025, 1, 1),\n"
              "               catchup=True, max_active_runs=1, max_active_tasks=1)\n\n\nd = make('local')\n")
    dag.write_text(source)
    found = check_paths([dag], now=NOW).findings
    assert [(f.code, f.line, f.fixable) for f in found] == [("DG101", 7, True), ("DG101", 10, False)]
    run = fix_paths([dag], unsafe_fixes=True, now=NOW)
    assert dag.read_text() == source.replace("catchup=True", "catchup=False")
    assert [a.code for f in run.files for a in f.applied] == ["DG101"] and run.result.findings == ()


RENAMING = """\
import pendulum
from airflow.sdk import DAG


def forwarding(dag_id, **kwargs):
    return DAG(dag_id, start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), max_active_runs=1,
               max_active_tasks=1, **kwargs)


def named(dag_id, schedule_interval="@daily"):
    return DAG(dag_id, start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), max_active_runs=1,
               max_active_tasks=1, schedule_interval=schedule_interval)


a = forwarding("a", schedule_interval="@hourly")
b = named("b", schedule_interval="@hourly")
c = named("c", "@hourly")
"""


def test_removed_keyword_is_renamed_in_the_call_only_when_forwarded_through_kwargs(tmp_path):
    dag = tmp_path / "renaming.py"
    dag.write_text(RENAMING)
    found = [(f.line, f.fixable) for f in check_paths([dag], now=NOW).findings if f.code == "DG106"]
    # named()'s own DAG(...) call passes schedule_interval too: the factory's to rename (line 12).
    # Its callers' keyword and positional value (lines 16, 17) bind its parameter: the TypeError
    # is in named()'s call, reported there only (issue 21, F6; the positional one made DG106
    # crash with an internal error once).
    assert found == [(12, True), (15, True)]
    run = fix_paths([dag], now=NOW)
    text = dag.read_text()
    assert 'a = forwarding("a", schedule="@hourly")' in text and 'b = named("b", schedule_interval="@hourly")' in text
    assert run.result.internal_errors == ()
