"""Catchup run counts for timetables, checked against Airflow 3.3's own timetables: the count
in DG101's message equals the runs Airflow's `next_dagrun_info_v2` creates up to now."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.lint_helpers import NOW, lint

if not os.environ.get("CI"):
    pytest.importorskip("airflow")

START = (2026, 10, 1)
# Core timetable classes, so the same expression runs in Airflow and is linted by dagguard.
SCHEDULES = {
    "two_crons": 'MultipleCronTriggerTimetable("0 1 * * *", "0 13 * * *", timezone="UTC")',
    "overlapping_crons": 'MultipleCronTriggerTimetable("0 0 * * *", "0 0,12 * * *", "30 6 * * 1-5", timezone="UTC")',
    "partitions": 'CronPartitionTimetable("0 */6 * * *", timezone="UTC")',
    "assets_or_time": 'AssetOrTimeSchedule(timetable=CronTriggerTimetable("@daily", timezone="UTC"), assets=[])',
    "data_intervals": 'CronDataIntervalTimetable("0 3 * * *", timezone="UTC")',
}
IMPORTS = """
from airflow.timetables.assets import AssetOrTimeSchedule
from airflow.timetables.interval import CronDataIntervalTimetable
from airflow.timetables.trigger import CronPartitionTimetable, CronTriggerTimetable, MultipleCronTriggerTimetable
"""
COUNT = IMPORTS + """
import json, sys, warnings
import pendulum
from airflow.timetables.base import TimeRestriction

def catchup_runs(timetable, start, now):
    restriction = TimeRestriction(earliest=start, latest=None, catchup=True)
    last, runs = None, 0
    while True:
        info = timetable.next_dagrun_info_v2(last_dagrun_info=last, restriction=restriction)
        if info is None or info.run_after > now:
            return runs
        runs, last = runs + 1, info

schedules, start, now = json.loads(sys.argv[1])
start, now = pendulum.datetime(*start, tz="UTC"), pendulum.parse(now)
print("RESULT" + json.dumps({name: catchup_runs(eval(expr), start, now) for name, expr in schedules.items()}))
"""


@pytest.fixture(scope="module")
def airflow_counts(tmp_path_factory):
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path_factory.mktemp("airflow_home"))}
    run = subprocess.run([sys.executable, "-c", COUNT, json.dumps([SCHEDULES, START, NOW.isoformat()])],
                         capture_output=True, text=True, env=env, timeout=300)
    line = next((line for line in run.stdout.splitlines() if line.startswith("RESULT")), None)
    assert line is not None, run.stderr
    return json.loads(line[len("RESULT"):])


@pytest.mark.parametrize("name", SCHEDULES)
def test_catchup_count_matches_airflow(tmp_path, airflow_counts, name):
    found = lint(tmp_path, IMPORTS + f"""
import pendulum
from airflow.sdk import DAG

DAG("counted", schedule={SCHEDULES[name]}, start_date=pendulum.datetime{START}, catchup=True)
""")
    message = next(f.message for f in found if f.code == "DG101")
    assert re.search(r"would queue ([\d,]+) runs", message).group(1) == f"{airflow_counts[name]:,}"
