"""Values computed when the file is parsed: DG104 for start dates, DG202 for the clock in a
scheduled task's data, DG108 for every other argument; each argument reported by one of them."""

from __future__ import annotations

import pytest

from tests.lint_helpers import codes, lint

CLOCK_IN_COMMAND = """
    from datetime import datetime
    from airflow.providers.standard.operators.bash import BashOperator
    from airflow.sdk import DAG

    with DAG("export", schedule={schedule}):
        BashOperator(task_id="export", bash_command=f"export {{datetime.now():%Y%m%d}}")
"""


@pytest.mark.parametrize(("schedule", "expected"), [('"@daily"', "DG202"), ("None", "DG108")])
def test_a_clock_read_in_a_tasks_data_is_one_finding(tmp_path, schedule, expected):
    found = [c for c in codes(lint(tmp_path, CLOCK_IN_COMMAND.format(schedule=schedule))) if c in ("DG108", "DG202")]
    assert found == [expected]


def test_start_dates_are_dg104s_only(tmp_path):
    found = codes(lint(tmp_path, """
        import pendulum
        from airflow.providers.standard.operators.empty import EmptyOperator
        from airflow.sdk import DAG

        with DAG("d", schedule="@daily", start_date=pendulum.now(), default_args={"start_date": pendulum.now()}):
            EmptyOperator(task_id="t", start_date=pendulum.now())
    """))
    assert found.count("DG104") == 2   # one per DAG, one per task
    assert "DG108" not in found


def test_one_finding_per_argument_and_random_ids_in_task_data(tmp_path):
    found = lint(tmp_path, """
        import random
        import uuid
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.sdk import DAG

        SUFFIX = uuid.uuid4().hex

        with DAG("d", schedule="@daily", tags=[str(random.random()), str(random.random())],
                 default_args={"owner": f"o-{SUFFIX}", "retries": random.Random(7).randint(1, 3)}):
            BashOperator(task_id="t", bash_command=f"run --id {SUFFIX}")
    """)
    messages = [f.message for f in found if f.code == "DG108"]
    assert len(messages) == 3
    assert "tags" in messages[0] and "default_args['owner']" in messages[1] and "bash_command" in messages[2]


# Issue 21, item 3: a start_date cut to a day moves once a day; no message may say it changes
# on every parse.
DAILY_STARTS = [
    'pendulum.today("UTC")', 'pendulum.yesterday("UTC")', "days_ago(1)", "date.today()",
    "datetime.combine(date.today(), time())", "datetime.combine(datetime.now(), time.min)",
    "datetime.now().replace(hour=0, minute=0, second=0, microsecond=0)",
    'pendulum.now("UTC").start_of("day")', "datetime.now().date()", 'pendulum.today("UTC").add(days=-1)',
    "TODAY - timedelta(days=1)",
]
PARSE_STARTS = [
    "datetime.now()", "datetime.now() - timedelta(days=1)", "datetime.utcnow()", 'pendulum.now("UTC")',
    "datetime.now().replace(hour=0, minute=0)", "NOW.replace(second=0)",
]
CADENCE_DAG = """
    from datetime import date, datetime, time, timedelta
    import pendulum
    from airflow.utils.dates import days_ago
    from airflow.sdk import DAG

    TODAY = datetime.now().replace(hour=0, minute=0, second=0, microsecond=0)
    NOW = datetime.now()

    with DAG("d", schedule="@daily", start_date={start}, max_active_runs=1, max_active_tasks=1):
        pass
"""


@pytest.mark.parametrize("start", DAILY_STARTS)
def test_a_start_date_cut_to_a_day_is_dg104_moving_once_a_day(tmp_path, start):
    found = lint(tmp_path, CADENCE_DAG.format(start=start))
    assert codes(found) == ["DG104"]
    assert "moves once a day" in found[0].message and "every parse" not in found[0].message


@pytest.mark.parametrize("start", PARSE_STARTS)
def test_a_start_date_read_from_the_clock_moves_on_every_parse(tmp_path, start):
    found = lint(tmp_path, CADENCE_DAG.format(start=start))
    assert codes(found) == ["DG104"]
    assert "moves on every parse" in found[0].message


@pytest.mark.parametrize("where", ["default_args", "task"])
def test_a_daily_start_date_in_default_args_or_a_task_is_dg104_daily(tmp_path, where):
    argument = ('default_args={"start_date": days_ago(1)}, start_date=datetime(2026, 1, 1)' if where == "default_args"
                else "start_date=datetime(2026, 1, 1)")
    task = ', start_date=pendulum.yesterday("UTC")' if where == "task" else ""
    found = lint(tmp_path, f"""
        from datetime import datetime
        import pendulum
        from airflow.utils.dates import days_ago
        from airflow.providers.standard.operators.empty import EmptyOperator
        from airflow.sdk import DAG

        with DAG("d", schedule="@daily", {argument}, max_active_runs=1, max_active_tasks=1):
            EmptyOperator(task_id="t"{task})
    """)
    assert codes(found) == ["DG104"]
    assert "moves once a day" in found[0].message and "every parse" not in found[0].message


@pytest.mark.parametrize(("value", "daily"), [
    ('pendulum.today("UTC")', True), ("str(date.today())", True), ('f"{days_ago(0):%Y}"', True),
    ("str(datetime.now())", False), ("str(datetime.now().replace(hour=0))", False),
])
def test_dg108_says_how_often_the_value_changes(tmp_path, value, daily):
    found = lint(tmp_path, f"""
        from datetime import date, datetime
        import pendulum
        from airflow.utils.dates import days_ago
        from airflow.sdk import DAG

        with DAG("d", schedule=None, description={value}, start_date=datetime(2026, 1, 1)):
            pass
    """)
    assert codes(found) == ["DG108"]
    message = found[0].message
    assert ("changes once a day" in message) is daily
    assert ("changes from parse to parse" in message) is not daily


NEVER_SCHEDULED = """\
import pendulum
from datetime import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator

with DAG("manual", {schedule}start_date=datetime.now(), max_active_runs=1, max_active_tasks=1):
    EmptyOperator(task_id="only", start_date={task_start})
"""


@pytest.mark.parametrize("schedule, airflow_version, flagged", [
    ("schedule=None, ", "3", False),
    ("schedule=None, ", "2", False),
    ("schedule_interval=None, ", "2", False),
    ("", "3", False),          # no schedule on Airflow 3: never scheduled
    ("", "2", True),           # no schedule on Airflow 2: daily
    ('schedule="@once", ', "3", True),
    ('schedule="@daily", ', "3", True),
])
def test_a_dag_the_scheduler_never_starts_has_no_dg104_for_its_start_date(tmp_path, schedule, airflow_version,
                                                                           flagged):
    """Found on real repositories: 21 of 39 DG104 findings were on `schedule=None` DAGs, whose runs
    come from triggers only, so a moving start_date skips and creates none."""
    found = lint(tmp_path, NEVER_SCHEDULED.format(schedule=schedule, task_start="datetime(2026, 1, 1)"),
                 airflow_version=airflow_version)
    assert [f.dag_id for f in found if f.code == "DG104"] == (["manual"] if flagged else [])


def test_a_tasks_moving_start_date_is_flagged_on_a_manual_dag_too(tmp_path):
    found = lint(tmp_path, NEVER_SCHEDULED.format(schedule="schedule=None, ", task_start="datetime.now()"))
    [task_finding] = [f for f in found if f.code == "DG104"]
    assert "task 'only'" in task_finding.message or "'only'" in task_finding.message
