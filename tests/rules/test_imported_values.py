"""Values another module of the project makes (issue 21): an imported default_args, a project
function returning a dict. Each is read in its own module, reported in the checked file at the
argument that brings it in, and named where it is made."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dagguard.api import check_paths
from dagguard.config import Settings
from dagguard.engine.findings import Finding
from tests.lint_helpers import NOW

COMMON = """\
import pendulum
TIMEZONE = "UTC"
default_args = {"start_date": pendulum.yesterday(TIMEZONE), "owner": "x"}
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def _check(root: Path, target: Path, **settings):
    result = check_paths([target], settings=Settings(config_path=root / "pyproject.toml", **settings), now=NOW)
    assert result.internal_errors == ()
    return result


def _only(findings, code: str) -> Finding:
    found = [f for f in findings if f.code == code]
    assert len(found) == 1, [f"{f.code} {f.message}" for f in findings]
    return found[0]


DAG_AS_CALL = """\
{pendulum}from common import default_args
from airflow import DAG

DAG("e", default_args=default_args, schedule="@daily", catchup=True)
"""
DAG_AS_CONTEXT = """\
{pendulum}from common import default_args
from airflow import DAG

with DAG("e", default_args=default_args, schedule="@daily", catchup=True):
    pass
"""


@pytest.mark.parametrize("dag_text", [DAG_AS_CALL, DAG_AS_CONTEXT], ids=["call", "with"])
@pytest.mark.parametrize("own_import", [True, False], ids=["own-import", "no-own-import"])
@pytest.mark.parametrize("layout", ["root", "dags", "dags-given"])
def test_imported_moving_start_date_is_dg104_at_the_dag_naming_the_other_file(tmp_path, dag_text, own_import,
                                                                             layout):
    # The crash of issue 21: DG104 reported the entry's key, a node of common/__init__.py's tree,
    # in dags/e.py (internal error, exit 2), and found it only when e.py imported pendulum too.
    common = "common/__init__.py" if layout == "root" else "dags/common/__init__.py"
    text = dag_text.format(pendulum="import pendulum\n" if own_import else "")
    _write(tmp_path, {common: COMMON, "dags/e.py": text})
    target = tmp_path / "dags" if layout == "dags-given" else tmp_path
    finding = _only(_check(tmp_path, target).findings, "DG104")
    assert Path(finding.path).name == "e.py"
    line = 4 if own_import else 3
    source_line = text.splitlines()[line]
    assert finding.line == line + 1
    assert finding.column == source_line.index("default_args=") + 1
    assert "start_date comes from pendulum.yesterday() (" in finding.message
    assert f"{Path(common).as_posix()}:3)" in finding.message.replace("\\", "/")
    assert "moves once a day" in finding.message and "every parse" not in finding.message


@pytest.mark.parametrize("form", [
    "default_args", "default_args | {'retries': 1}", "default_args.copy()", "dict(default_args, retries=1)",
    "{**default_args}", "{**default_args, 'retries': 1}",
])
@pytest.mark.parametrize(("made", "daily"), [
    ("pendulum.yesterday(TIMEZONE)", True),
    ("days_ago(1)", True),
    ("datetime.now() - timedelta(days=1)", False),
])
def test_every_form_of_an_imported_default_args_is_read(tmp_path, form, made, daily):
    _write(tmp_path, {
        "common/__init__.py": f"""\
            from datetime import datetime, timedelta
            import pendulum
            from airflow.utils.dates import days_ago
            TIMEZONE = "UTC"
            default_args = {{"owner": "x", "start_date": {made}}}
            """,
        "dags/e.py": f"""\
            from airflow import DAG
            from common import default_args
            DAG("e", default_args={form}, schedule="@daily")
            """,
    })
    findings = _check(tmp_path, tmp_path).findings
    finding = _only(findings, "DG104")
    assert (finding.line, finding.column) == (3, 10)
    assert "common/__init__.py:5)" in finding.message.replace("\\", "/")
    assert ("moves once a day" in finding.message) is daily
    assert "DG108" not in [f.code for f in findings]


def test_imported_dag_keywords_are_located_and_read_in_their_module(tmp_path):
    _write(tmp_path, {
        "common/__init__.py": """\
            import uuid
            from datetime import datetime
            dag_kwargs = {"schedule": "*/10 * * * *", "catchup": True, "start_date": datetime(2026, 1, 1),
                          "description": f"built {uuid.uuid4()}"}
            """,
        "dags/e.py": """\
            from airflow import DAG
            from common import dag_kwargs
            DAG("e", **dag_kwargs)
            """,
    })
    findings = _check(tmp_path, tmp_path).findings
    dg101 = _only(findings, "DG101")
    assert (dg101.line, dg101.column) == (3, 12)   # at `dag_kwargs`
    assert "~48,000 runs" in dg101.message
    dg108 = _only(findings, "DG108")
    assert dg108.line == 3 and "description from uuid.uuid4() (" in dg108.message
    assert "common/__init__.py:4)" in dg108.message.replace("\\", "/")   # the line of the uuid4() call


def test_a_removed_trigger_rule_in_imported_default_args_has_no_fix_in_the_dag_file(tmp_path):
    _write(tmp_path, {
        "common.py": 'default_args = {"trigger_rule": "none_failed_or_skipped"}\n',
        "dags/e.py": """\
            from airflow import DAG
            from common import default_args
            DAG("e", default_args=default_args, schedule=None)
            """,
    })
    finding = _only(_check(tmp_path, tmp_path / "dags").findings, "DG109")
    assert (finding.line, finding.column) == (3, 10)
    assert not finding.fixable   # the value is written in common.py, which this check does not edit


# One project module making every kind of risky value, and a DAG file using them in every way
# it can: no rule may report a node of common.py's tree in dags/g.py (or fail to locate one).
EVERY_RULE_COMMON = """\
import random
import uuid
from datetime import datetime, timedelta

import pendulum
from airflow.utils.dates import days_ago

TIMEZONE = "UTC"
YESTERDAY = pendulum.yesterday(TIMEZONE)
default_args = {"start_date": pendulum.yesterday(TIMEZONE), "owner": "x", "trigger_rule": "none_failed_or_skipped",
                "task_concurrency": 2, "provide_context": True, "retries": f"{random.random()}"}
moving_args = {"start_date": datetime.now() - timedelta(days=1), "owner": f"x{uuid.uuid4()}"}
daily_args = {"start_date": days_ago(1), "end_date": YESTERDAY}
dag_kwargs = {"schedule": "*/10 * * * *", "catchup": True, "start_date": datetime(2020, 1, 1),
              "description": f"built {datetime.now()}", "tags": [str(random.random())],
              "schedule_interval": "@daily", "concurrency": 3, "max_active_runs": 40}
task_kwargs = {"start_date": datetime.now(), "doc_md": f"at {datetime.now()}", "execution_date": "x",
               "bash_command": f"echo {datetime.now()} {{{{ execution_date }}}}", "task_concurrency": 3,
               "sql": "INSERT INTO t SELECT * FROM s WHERE d = CURRENT_DATE", "trigger_rule": "none_failed_or_skipped",
               "env": {"DAY": "{{ prev_ds }}", "NEXT": "{{ next_execution_date }}"}}
templated = {"bash_command": "echo {{ execution_date }} {{ next_ds }}", "env": {"X": "{{ yesterday_ds }}"}}
SQL = "INSERT INTO target SELECT * FROM source WHERE d < now()"
COMMAND = f"run --at {datetime.now()}"


def get_default_args():
    return {"owner": "x", "start_date": days_ago(2), "retries": random.randint(1, 3)}


def make_dag(dag_id, **kwargs):
    from airflow import DAG
    return DAG(dag_id, schedule="@daily", start_date=pendulum.now(), default_args=default_args,
               description=f"{uuid.uuid4()}", **kwargs)
"""
EVERY_RULE_DAGS = """\
from airflow import DAG
from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.sdk import task
from common import (COMMAND, SQL, daily_args, dag_kwargs, default_args, get_default_args, make_dag, moving_args,
                    task_kwargs, templated)

with DAG("g1", default_args=default_args, schedule="@daily", catchup=True) as d1:
    BashOperator(task_id="a", **task_kwargs)
    BashOperator(task_id="b", bash_command=COMMAND)
    SQLExecuteQueryOperator(task_id="c", sql=SQL, conn_id="x")
    BashOperator(task_id="d", **templated)

DAG("g2", default_args=moving_args | {"retries": 1}, schedule="@daily")
DAG("g3", default_args=daily_args.copy(), schedule=None)
DAG("g4", default_args=dict(default_args, retries=2), schedule="@daily")
DAG("g5", default_args={**moving_args}, schedule="@daily")
DAG("g6", **dag_kwargs)
DAG("g7", default_args=get_default_args(), schedule="@daily")
d8 = make_dag("g8")
DAG("g9", **dag_kwargs, default_args=task_kwargs)

with DAG("g10", schedule="@hourly", start_date=daily_args["start_date"]):
    @task(**task_kwargs)
    def t():
        pass
    t()
"""


def test_no_rule_reports_a_node_of_an_imported_module_in_the_checked_file(tmp_path):
    _write(tmp_path, {"common.py": EVERY_RULE_COMMON, "dags/g.py": EVERY_RULE_DAGS})
    result = _check(tmp_path, tmp_path / "dags", select=("ALL",))
    lines = EVERY_RULE_DAGS.splitlines()
    findings = [f for f in result.findings if Path(f.path).name == "g.py"]
    assert {"DG101", "DG104", "DG106", "DG108", "DG109", "DG201", "DG202", "DG203", "DG205"} <= {
        f.code for f in findings}   # the case reaches most rules
    for finding in findings:
        # Each finding sits on code of g.py that brings the value in, at a token of that line.
        assert 1 <= finding.line <= len(lines), finding
        assert finding.column <= len(lines[finding.line - 1]), finding
        assert "{made_at}" not in finding.message
    # A value made in common.py is named there, on the line that makes it.
    common_lines = EVERY_RULE_COMMON.splitlines()
    for finding in findings:
        if "common.py:" in finding.message:
            number = int(finding.message.split("common.py:", 1)[1].split(")", 1)[0])
            assert 1 <= number <= len(common_lines)
