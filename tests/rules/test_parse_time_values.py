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

        with DAG("d", schedule=None, start_date=pendulum.now(), default_args={"start_date": pendulum.now()}):
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
