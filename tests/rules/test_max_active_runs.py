"""DG102/DG103 report only DAGs whose schedule recurs; @continuous needs max_active_runs=1."""

from __future__ import annotations

import pytest

from tests.lint_helpers import codes, lint

PREAMBLE = """
from airflow.sdk import (Asset, AssetOrTimeSchedule, CronDataIntervalTimetable, CronTriggerTimetable,
                         DAG, MultipleCronTriggerTimetable)
from airflow.timetables.simple import ContinuousTimetable
from settings import SCHEDULE
import datetime
"""


@pytest.mark.parametrize("schedule", [
    '"@daily"', '"*/15 * * * *"', "datetime.timedelta(hours=6)", 'CronTriggerTimetable("0 3 * * *", timezone="UTC")',
    'CronDataIntervalTimetable("0 3 * * *", timezone="UTC")',
    'MultipleCronTriggerTimetable("0 3 * * *", "0 15 * * *", timezone="UTC")',
    'AssetOrTimeSchedule(timetable=CronTriggerTimetable("0 * * * *", timezone="UTC"), assets=[Asset("a")])',
])
def test_recurring_schedules_are_flagged(tmp_path, schedule):
    found = codes(lint(tmp_path, PREAMBLE + f"DAG('d', schedule={schedule})\n"))
    assert found.count("DG102") == 1 and found.count("DG103") == 1


@pytest.mark.parametrize("schedule", [
    None, '"@once"', '[Asset("a")]', 'Asset("a") | Asset("b")', "SCHEDULE", "SCHEDULE['orders']",
])
def test_schedules_that_queue_no_backlog_or_are_unknown_are_not_flagged(tmp_path, schedule):
    source = PREAMBLE + (f"DAG('d', schedule={schedule})\n" if schedule else "DAG('d')\n")
    found = codes(lint(tmp_path, source))
    assert "DG102" not in found and "DG103" not in found


def test_no_schedule_is_daily_on_airflow_2(tmp_path):
    found = codes(lint(tmp_path, "from airflow import DAG\nDAG('d')\n", airflow_version="2"))
    assert "DG102" in found and "DG103" in found


@pytest.mark.parametrize("schedule", ['"@continuous"', "ContinuousTimetable()"])
def test_continuous_without_max_active_runs_does_not_load(tmp_path, schedule):
    [finding] = [f for f in lint(tmp_path, PREAMBLE + f"DAG('d', schedule={schedule})\n") if f.code == "DG102"]
    assert finding.severity == "error" and "does not load" in finding.message
    assert "DG102" not in codes(lint(tmp_path, PREAMBLE + f"DAG('d', schedule={schedule}, max_active_runs=1)\n"))
