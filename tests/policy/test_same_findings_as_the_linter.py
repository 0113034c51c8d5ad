"""On DAG files the linter can read, the policy (on the DAGs Airflow 3.3 loads from them) reports
the same codes with the same messages and help, for the rules it applies."""

from __future__ import annotations

import datetime as dt
import os
import textwrap
from pathlib import Path

import pytest

from dagguard.api import check_paths
from dagguard.config import Settings
from dagguard.policy.findings import POLICY_RULES
from tests.policy.airflow_bag import airflow_home, load_bags

if not os.environ.get("CI"):
    pytest.importorskip("airflow")

HEADER = """\
import datetime
import pendulum
from airflow.sdk import DAG, CronDataIntervalTimetable, CronTriggerTimetable, MultipleCronTriggerTimetable
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator

START = pendulum.datetime(2024, 1, 1, tz="UTC")
"""
FILES = {
    # DG101 with its count, DG102, DG103.
    "flood_daily.py": """
with DAG("flood_daily", schedule="@daily", start_date=START, catchup=True):
    EmptyOperator(task_id="a") >> EmptyOperator(task_id="b")
""",
    # DG101 on a timedelta, start_date from default_args, one run at a time, a straight chain:
    # no DG103 (one run never has more than one task running).
    "flood_delta.py": """
with DAG("flood_delta", schedule=datetime.timedelta(hours=6), default_args={"start_date": START}, catchup=True,
         max_active_runs=1):
    EmptyOperator(task_id="a") >> EmptyOperator(task_id="b") >> EmptyOperator(task_id="c")
""",
    # DG103 with a bound below 16: six tasks side by side, one run at a time.
    "fan_out.py": """
with DAG("fan_out", schedule="@daily", start_date=START, catchup=False, max_active_runs=1):
    [EmptyOperator(task_id="t1"), EmptyOperator(task_id="t2"), EmptyOperator(task_id="t3"),
     EmptyOperator(task_id="t4"), EmptyOperator(task_id="t5"), EmptyOperator(task_id="t6")]
""",
    # DG107: bounded catchup over max-catchup-runs (set to 100 below).
    "bounded.py": """
with DAG("bounded", schedule="@daily", start_date=START, end_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
         catchup=True, max_active_runs=1, max_active_tasks=2):
    EmptyOperator(task_id="a")
""",
    # DG101 on a data-interval timetable and on several crons.
    "timetables.py": """
with DAG("intervals", schedule=CronDataIntervalTimetable("0 3 * * *", timezone="UTC"), start_date=START,
         catchup=True, max_active_runs=1, max_active_tasks=2):
    EmptyOperator(task_id="a")
with DAG("two_crons", schedule=MultipleCronTriggerTimetable("0 1 * * *", "0 13 * * *", timezone="UTC"),
         start_date=START, catchup=True, max_active_runs=1, max_active_tasks=2):
    EmptyOperator(task_id="a")
""",
    # DG206: an interval range on a trigger timetable, in the SQL and in a .sql file; none on a
    # timetable with an interval.
    "ranges.py": """
with DAG("ranges", schedule="@daily", start_date=START, catchup=False, max_active_runs=1, max_active_tasks=2):
    SQLExecuteQueryOperator(task_id="copy_orders", conn_id="wh",
                            sql="INSERT INTO o SELECT * FROM raw WHERE ts >= '{{ data_interval_start }}' "
                                "AND ts < '{{ data_interval_end }}'")
    SQLExecuteQueryOperator(task_id="copy_events", conn_id="wh", sql="copy_events.sql")
with DAG("ranges_ok", schedule=CronTriggerTimetable("@daily", timezone="UTC", interval=datetime.timedelta(days=1)),
         start_date=START, catchup=False, max_active_runs=1, max_active_tasks=2):
    SQLExecuteQueryOperator(task_id="copy_orders", conn_id="wh",
                            sql="INSERT INTO o SELECT * FROM raw WHERE ts >= '{{ data_interval_start }}' "
                                "AND ts < '{{ data_interval_end }}'")
""",
    # DG206: dagguard's own operator on a trigger timetable refuses the empty interval.
    "merge.py": """
from dagguard.idempotent import IntervalMergeOperator

with DAG("merge", schedule="@daily", start_date=START, catchup=False, max_active_runs=1, max_active_tasks=2):
    IntervalMergeOperator(task_id="merge_orders", conn_id="wh", source_sql="SELECT * FROM raw",
                          target_table="orders", time_column="ts", unique_key="id")
""",
    "copy_events.sql": "INSERT INTO e SELECT * FROM raw_e\nWHERE at >= '{{ data_interval_start }}'\n"
                       "  AND at < '{{ data_interval_end }}'\n",
    # A custom timetable recurs (DG102, DG103), on a calendar whose catchup neither judges.
    "workdays.py": """
from workday import AfterWorkdayTimetable

with DAG("workdays", schedule=AfterWorkdayTimetable(), start_date=START, catchup=True):
    EmptyOperator(task_id="a") >> EmptyOperator(task_id="b")
""",
    "workday.py": """
from airflow.timetables.base import DagRunInfo, DataInterval, Timetable


class AfterWorkdayTimetable(Timetable):
    def infer_manual_data_interval(self, *, run_after):
        return DataInterval.exact(run_after)

    def next_dagrun_info(self, *, last_automated_data_interval, restriction):
        return None
""",
    "clean.py": """
with DAG("clean", schedule=None, start_date=START):
    EmptyOperator(task_id="a")
""",
}


def _policy_findings(logs: list[list[str]]) -> set[tuple[str, str, str]]:
    """(file, code, message + help) from the policy's log lines `dagguard: PATH: CODE message`."""
    found = set()
    for _, line in logs:
        where, _, rest = line[len("dagguard: "):].partition(": ")
        code, _, text = rest.partition(" ")
        found.add((Path(where).name, code, text))
    return found


def test_the_policy_reports_what_the_linter_reports(tmp_path):
    folder = tmp_path / "dags"
    folder.mkdir()
    for name, body in FILES.items():
        (folder / name).write_text(HEADER + textwrap.dedent(body) if name.endswith(".py") else body)
    (folder / "dagguard.toml").write_text('mode = "warn"\nmax-catchup-runs = 100\n')
    [result] = load_bags(airflow_home(tmp_path), [(folder, {})], python_path=[folder])
    now = dt.datetime.now(dt.timezone.utc)
    assert result["errors"] == {}
    assert len(result["dags"]) == 11
    linted = check_paths([folder], settings=Settings(max_catchup_runs=100), now=now, jobs=1)
    expected = {(Path(f.path).name, f.code, f.message + (f"\n  help: {f.help}" if f.help else ""))
                for f in linted.findings if f.code in POLICY_RULES}
    assert {code for _, code, _ in expected} == {"DG101", "DG102", "DG103", "DG107", "DG206"}
    assert {code for name, code, _ in expected if name == "workdays.py"} == {"DG102", "DG103"}
    assert {code for name, code, _ in expected if name == "merge.py"} == {"DG206"}
    assert _policy_findings(result["logs"]) == expected
