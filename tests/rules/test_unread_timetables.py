"""Airflow's cron and delta timetables recur whatever their cron or period: one whose argument is
not statically known (a Variable, a constant of an unseen module, a relativedelta) is still a
recurring schedule for DG101/DG102/DG103; only the number of runs catchup queues is unknown."""

from __future__ import annotations

import json
import textwrap

import pytest

from dagguard.api import check_paths
from dagguard.config import Settings
from tests.lint_helpers import NOW, codes, lint

UNKNOWN_COUNT = ("DAG 'tt' enables catchup without end_date; catchup would queue a run for every interval "
                 "since start_date, how many is unknown (its timetable's cron or period is not static)")

# Each class from each path Airflow 3.3.2 exports it under (airflow/sdk/__init__.py,
# airflow/sdk/definitions/timetables/*.py, airflow/timetables/*.py).
CLASS_PATHS = [
    (module, name)
    for name, modules in {
        "CronTriggerTimetable": ("airflow.sdk", "airflow.sdk.definitions.timetables.trigger", "airflow.timetables.trigger"),
        "CronDataIntervalTimetable": ("airflow.sdk", "airflow.sdk.definitions.timetables.interval",
                                      "airflow.timetables.interval"),
        "DeltaTriggerTimetable": ("airflow.sdk", "airflow.sdk.definitions.timetables.trigger", "airflow.timetables.trigger"),
        "DeltaDataIntervalTimetable": ("airflow.sdk", "airflow.sdk.definitions.timetables.interval",
                                       "airflow.timetables.interval"),
        "MultipleCronTriggerTimetable": ("airflow.sdk", "airflow.sdk.definitions.timetables.trigger",
                                         "airflow.timetables.trigger"),
        "CronPartitionTimetable": ("airflow.sdk", "airflow.sdk.definitions.timetables.trigger",
                                   "airflow.timetables.trigger"),
    }.items()
    for module in modules
]
ARGUMENTS = {
    "CronTriggerTimetable": 'Variable.get("cron", "0 0 * * *"), timezone="UTC"',
    "CronDataIntervalTimetable": 'cron=Variable.get("cron", "0 0 * * *"), timezone="UTC"',
    "DeltaTriggerTimetable": 'timedelta(hours=int(Variable.get("hours", "6")))',
    "DeltaDataIntervalTimetable": 'delta=timedelta(hours=int(Variable.get("hours", "6")))',
    "MultipleCronTriggerTimetable": '"0 1 * * *", Variable.get("cron", "0 13 * * *"), timezone="UTC"',
    "CronPartitionTimetable": 'Variable.get("cron", "0 0 * * *"), timezone="UTC"',
}


def _dag(imports: str, schedule: str, extra: str = "") -> str:
    return f"""
        import pendulum
        from datetime import timedelta
        from airflow.models import Variable
        from airflow.sdk import DAG
        {imports}

        DAG("tt", schedule={schedule}, start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=True{extra})
    """


@pytest.mark.parametrize(("module", "name"), CLASS_PATHS, ids=lambda v: v)
def test_a_timetable_whose_argument_is_a_variable_recurs(tmp_path, module, name):
    found = lint(tmp_path, _dag(f"from {module} import {name}", f"{name}({ARGUMENTS[name]})"))
    assert [f.message for f in found if f.code == "DG101"] == [UNKNOWN_COUNT]
    assert codes(found).count("DG102") == 1 and codes(found).count("DG103") == 1
    assert "DG301" in codes(found)   # the Variable.get itself, read at every parse


@pytest.mark.parametrize("schedule", [
    'CronTriggerTimetable(CRON, timezone="UTC")',
    'CronTriggerTimetable("0 0 * * *", timezone="UTC", interval=timedelta(days=int(DAYS)))',
    'CronTriggerTimetable(CRON, timezone="UTC", interval=timedelta(days=1))',
    "DeltaDataIntervalTimetable(relativedelta(months=1))",
    "DeltaTriggerTimetable(PERIOD)",
    'MultipleCronTriggerTimetable(*CRONS, timezone="UTC")',
    "TIMETABLE",
    'AssetOrTimeSchedule(timetable=CronTriggerTimetable(CRON, timezone="UTC"), assets=[Asset("s3://b/k")])',
])
def test_arguments_from_elsewhere_keep_the_schedule_recurring(tmp_path, schedule):
    found = lint(tmp_path, _dag(
        "from dateutil.relativedelta import relativedelta\n"
        "        from airflow.sdk import (Asset, AssetOrTimeSchedule, CronTriggerTimetable, DeltaDataIntervalTimetable,\n"
        "                                 DeltaTriggerTimetable, MultipleCronTriggerTimetable)\n"
        "        from settings import CRON, CRONS, DAYS, PERIOD\n"
        "        TIMETABLE = CronTriggerTimetable(CRON, timezone='UTC')",
        schedule))
    rules = codes(found)
    assert rules.count("DG102") == 1 and rules.count("DG103") == 1
    dg101 = [f.message for f in found if f.code == "DG101"]
    if "interval=timedelta(days=int(DAYS))" in schedule:
        # The cron is static: the run count is too, whatever the interval.
        assert dg101 and "catchup would queue" in dg101[0] and "unknown" not in dg101[0]
    else:
        assert dg101 == [UNKNOWN_COUNT]


def test_an_unread_timetable_with_an_end_date_is_no_dg107(tmp_path):
    found = lint(tmp_path, _dag("from airflow.sdk import CronTriggerTimetable",
                                'CronTriggerTimetable(Variable.get("cron"), timezone="UTC")',
                                ", end_date=pendulum.datetime(2026, 1, 1, tz='UTC')"), max_catchup_runs=1)
    assert "DG107" not in codes(found) and "DG101" not in codes(found)


@pytest.mark.parametrize(("imports", "schedule"), [
    ("from plugins.calendars import make_schedule", "make_schedule()"),   # an unknown call
    ("from plugins.calendars import SCHEDULE", "SCHEDULE"),               # an unknown value
])
def test_unknown_schedules_stay_silent(tmp_path, imports, schedule):
    rules = codes(lint(tmp_path, _dag(imports, schedule)))
    assert not {"DG101", "DG102", "DG103"} & set(rules)


def test_a_projects_own_timetable_class_is_no_countable_catchup(tmp_path):
    """A Timetable subclass of the project: its calendar is its own. DG102/DG103 take it as
    recurring (their pages), DG101 cannot say more than "unknown" and stays silent."""
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "workdays.py").write_text(textwrap.dedent("""
        from airflow.timetables.base import Timetable

        class AfterWorkdayTimetable(Timetable):
            def __init__(self, cron):
                self.cron = cron
    """))
    rules = codes(lint(tmp_path, _dag("from plugins.workdays import AfterWorkdayTimetable",
                                      'AfterWorkdayTimetable(Variable.get("c"))')))
    assert "DG101" not in rules
    assert "DG102" in rules and "DG103" in rules


def test_a_class_named_as_airflows_but_imported_from_elsewhere_is_not_airflows(tmp_path):
    rules = codes(lint(tmp_path, _dag("from mytimetables import CronTriggerTimetable",
                                      'CronTriggerTimetable(Variable.get("c"), timezone="UTC")')))
    assert "DG101" not in rules


def test_dags_listing_names_the_class_of_an_unread_timetable(tmp_path):
    target = tmp_path / "dag.py"
    target.write_text(textwrap.dedent(_dag(
        "from airflow.sdk import CronDataIntervalTimetable, MultipleCronTriggerTimetable\n"
        "        from plugins.calendars import make_schedule",
        'CronDataIntervalTimetable(cron=Variable.get("x", "0 0 * * *"), timezone="UTC")') + """
        DAG("two", schedule=MultipleCronTriggerTimetable("0 1 * * *", "0 13 * * *", timezone="UTC"))
        DAG("other", schedule=make_schedule())
    """))
    result = check_paths([target], settings=Settings(config_path=tmp_path / "pyproject.toml"), now=NOW)
    schedules = {dag.dag_id: dag.schedule for dag in result.dags}
    assert schedules == {"tt": "CronDataIntervalTimetable(unknown)",
                         "two": "MultipleCronTriggerTimetable(0 1 * * *, 0 13 * * *)", "other": "unknown"}
    assert json.loads(json.dumps([d.as_dict() for d in result.dags]))[0]["schedule"] == "CronDataIntervalTimetable(unknown)"


def test_a_recurrence_with_unknown_fires_counts_no_runs_and_shows_no_example_run():
    import datetime as dt

    from dagguard.model.schedules.run_dates import example_run
    from dagguard.model.schedules.schedules import Recurrence, count_runs

    unread = Recurrence((), None, data_interval=False)
    start = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    assert not unread.fires_known
    assert count_runs(unread, start, NOW) is None and example_run(unread) is None
    assert Recurrence(("0 0 * * *",), None, data_interval=False).fires_known
