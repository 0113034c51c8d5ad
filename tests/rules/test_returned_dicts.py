"""default_args and DAG keywords that project functions return (issue 21, item 1): a function
whose return value is statically a dict is followed, in this file or through the project index;
keys every path agrees on are known, the others stay unknown."""

from __future__ import annotations

import pytest

from tests.lint_helpers import codes, lint
from tests.rules.test_imported_values import _check, _only, _write

HEAD = """\
import os
import pendulum
from airflow import DAG
"""
LIMITS = "max_active_runs=1, max_active_tasks=1"


def _dg101(tmp_path, body: str) -> list[str]:
    return [f.message for f in lint(tmp_path, HEAD + body) if f.code == "DG101"]


def test_a_plain_helper_returning_a_dict_no_longer_silences_dg101(tmp_path):
    found = _dg101(tmp_path, f"""
def args():
    return {{"owner": "x", "start_date": pendulum.datetime(2026, 11, 1, tz="UTC")}}

DAG("d", default_args=args(), schedule="@daily", catchup=True, {LIMITS})
""")
    assert found == ["DAG 'd' enables catchup without end_date; catchup would queue 30 runs"]


@pytest.mark.parametrize("use", [
    'DAG("d", default_args=args(), schedule="@daily", catchup=True, {limits})',
    'DAG("d", **dag_kwargs(), {limits})',
    'DAG("d", default_args=dict(args(), owner="y"), schedule="@daily", catchup=True, {limits})',
    'DAG("d", default_args=dict(args(), **EXTRA), schedule="@daily", catchup=True, {limits})',
    'DAG("d", default_args=args() | {{"owner": "y"}}, schedule="@daily", catchup=True, {limits})',
    'DAG("d", default_args={{**args(), "owner": "y"}}, schedule="@daily", catchup=True, {limits})',
    'x = args().copy()\nx["owner"] = "y"\nDAG("d", default_args=x, schedule="@daily", catchup=True, {limits})',
    'DAG("d", default_args=copied(), schedule="@daily", catchup=True, {limits})',
])
def test_every_form_of_a_returned_dict_is_read(tmp_path, use):
    found = _dg101(tmp_path, """
EXTRA = {"retries": 2}

def args(owner="x"):
    return {"owner": owner, "start_date": pendulum.datetime(2026, 11, 1, tz="UTC")}

def dag_kwargs():
    return {"schedule": "@daily", "catchup": True, "default_args": args()}

def copied():
    base = args().copy()
    base["retries"] = 3
    base.update(owner="z")
    return base

""" + use.format(limits=LIMITS) + "\n")
    assert len(found) == 1 and "30 runs" in found[0]


@pytest.mark.parametrize("helper", [
    # end_date on one path only: whether it is set is not known.
    """
def args():
    base = {"start_date": pendulum.datetime(2026, 11, 1, tz="UTC")}
    if os.environ.get("PROD"):
        base["end_date"] = pendulum.datetime(2026, 11, 20, tz="UTC")
    return base
""",
    # Two returns that differ in their keys.
    """
def args():
    if os.environ.get("PROD"):
        return {"start_date": pendulum.datetime(2026, 11, 1, tz="UTC")}
    return {"start_date": pendulum.datetime(2026, 11, 1, tz="UTC"), "end_date": pendulum.datetime(2026, 11, 20)}
""",
    # A path that returns nothing, a dict handed to unknown code, a loop, a decorator.
    """
def args():
    if os.environ.get("PROD"):
        return {"start_date": pendulum.datetime(2026, 11, 1, tz="UTC")}
""",
    """
def args():
    base = {"start_date": pendulum.datetime(2026, 11, 1, tz="UTC")}
    add_alerts(base)
    return base
""",
    """
def args():
    base = {"start_date": pendulum.datetime(2026, 11, 1, tz="UTC")}
    for key in os.environ:
        base[key] = 1
    return base
""",
    """
import functools

@functools.cache
def args():
    return {"start_date": pendulum.datetime(2026, 11, 1, tz="UTC")}
""",
    # What a parameter brings is not known.
    """
def args(**extra):
    return {"start_date": pendulum.datetime(2026, 11, 1, tz="UTC"), **extra}
""",
])
def test_what_is_not_known_on_every_path_stays_unknown(tmp_path, helper):
    assert _dg101(tmp_path, helper + f"""
DAG("d", default_args=args(), schedule="@daily", catchup=True, {LIMITS})
""") == []


def test_keys_known_on_every_path_are_known(tmp_path):
    # Both branches agree that start_date is moving: DG104, even though the owners differ.
    found = lint(tmp_path, HEAD + """
def args():
    if os.environ.get("PROD"):
        return {"owner": "prod", "start_date": pendulum.yesterday("UTC")}
    return {"owner": "dev", "start_date": pendulum.yesterday("UTC")}

DAG("d", default_args=args(), schedule="@daily", max_active_runs=1, max_active_tasks=1)
""")
    assert codes(found) == ["DG104"]
    assert "moves once a day" in found[0].message


def test_module_level_changes_of_a_default_args_are_seen(tmp_path):
    # An end_date set after the dict is made, before the DAG reads it: no DG101. One set only
    # after the DAG was made does not bound it (Airflow copies default_args).
    found = _dg101(tmp_path, f"""
base = {{"owner": "x", "start_date": pendulum.datetime(2026, 11, 1, tz="UTC")}}
args = base.copy()
args["end_date"] = pendulum.datetime(2026, 11, 20, tz="UTC")
DAG("bounded", default_args=args, schedule="@daily", catchup=True, {LIMITS})

late = {{"owner": "x", "start_date": pendulum.datetime(2026, 11, 1, tz="UTC")}}
DAG("late", default_args=late, schedule="@daily", catchup=True, {LIMITS})
late["end_date"] = pendulum.datetime(2026, 11, 20, tz="UTC")

maybe = {{"owner": "x", "start_date": pendulum.datetime(2026, 11, 1, tz="UTC")}}
if os.environ.get("PROD"):
    maybe.update(end_date=pendulum.datetime(2026, 11, 20, tz="UTC"))
DAG("maybe", default_args=maybe, schedule="@daily", catchup=True, {LIMITS})
""")
    assert len(found) == 1 and found[0].startswith("DAG 'late'")


def test_readme_incident_through_a_project_helper_is_dg101_with_its_run_estimate(tmp_path):
    # Twelve DAGs of the issue: catchup=True, a fixed start_date from the project's helper, no
    # end_date, every ten minutes: ~47,000 runs each, and nothing reported before.
    _write(tmp_path, {
        "common/dag_args.py": """\
            import pendulum

            OWNER = "data"


            def get_default_dag_args(retries=2):
                args = {"owner": OWNER, "retries": retries}
                args["start_date"] = pendulum.datetime(2026, 1, 1, tz="UTC")
                return args
            """,
        "dags/city.py": """\
            from airflow import DAG
            from common.dag_args import get_default_dag_args

            with DAG("city_feed", default_args=get_default_dag_args(), schedule="*/10 * * * *", catchup=True,
                     max_active_runs=1, max_active_tasks=2):
                pass
            """,
    })
    finding = _only(_check(tmp_path, tmp_path).findings, "DG101")
    assert finding.message == "DAG 'city_feed' enables catchup without end_date; catchup would queue ~48,000 runs"


@pytest.mark.parametrize("use", [
    "DAG('d', default_args=get_args(), schedule='@daily', catchup=True, {limits})",
    "DAG('d', **dag_kwargs(), {limits})",
    "DAG('d', default_args=dict(get_args(), owner='y'), schedule='@daily', catchup=True, {limits})",
    "DAG('d', default_args=get_args() | {{'owner': 'y'}}, schedule='@daily', catchup=True, {limits})",
])
def test_project_functions_are_followed_through_the_index(tmp_path, use):
    _write(tmp_path, {
        "helpers/__init__.py": "from helpers.args import get_args, dag_kwargs\n",
        "helpers/args.py": """\
            import pendulum


            def get_args():
                return {"owner": "x", "start_date": pendulum.datetime(2026, 11, 1, tz="UTC")}


            def dag_kwargs():
                return {"schedule": "@daily", "catchup": True, "default_args": get_args()}
            """,
        "dags/d.py": "from airflow import DAG\nfrom helpers import get_args, dag_kwargs\n\n"
                     + use.format(limits=LIMITS) + "\n",
    })
    finding = _only(_check(tmp_path, tmp_path).findings, "DG101")
    assert finding.line == 4 and "30 runs" in finding.message


def test_a_clock_read_kept_in_a_local_name_of_the_helper_is_found(tmp_path):
    _write(tmp_path, {
        "common.py": """\
            from airflow.utils.dates import days_ago


            def get_default_args(owner="data"):
                start = days_ago(1)
                return {"owner": owner, "start_date": start}
            """,
        "dags/d.py": """\
            from airflow import DAG
            from common import get_default_args

            DAG("d", default_args=get_default_args(), schedule="@daily", max_active_runs=1, max_active_tasks=1)
            """,
    })
    finding = _only(_check(tmp_path, tmp_path).findings, "DG104")
    assert (finding.line, finding.column) == (4, 10)
    assert "days_ago() (" in finding.message and "common.py:5)" in finding.message.replace("\\", "/")
    assert "moves once a day" in finding.message
