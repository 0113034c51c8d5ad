"""DAG arguments put in default_args, where Airflow ignores them (FACTS: catchup,
max_active_runs and max_active_tasks there do not reach the DAG): the findings that ask for
them say so in their help (issue 21, missed-risk wording)."""

from __future__ import annotations

import pytest

from tests.lint_helpers import lint

DAG_WITH = """
import pendulum
from airflow import DAG

with DAG("prices", schedule_interval="@hourly", start_date=pendulum.datetime(2023, 3, 29, tz="UTC"),
         default_args={{{keys}"retries": 1}}):
    pass
"""


@pytest.mark.parametrize(("code", "key"), [("DG101", "catchup"), ("DG102", "max_active_runs"),
                                           ("DG103", "max_active_tasks"), ("DG103", "concurrency")])
def test_the_help_says_the_default_args_key_is_ignored(tmp_path, code, key):
    value = "False" if key == "catchup" else "1"
    found = [f for f in lint(tmp_path, DAG_WITH.format(keys=f'"{key}": {value}, '), airflow_version="2")
             if f.code == code]
    assert len(found) == 1
    assert found[0].help.startswith(f"'{key}' in default_args is ignored by Airflow, set it on the DAG; ")


@pytest.mark.parametrize("code", ["DG101", "DG102", "DG103"])
def test_no_note_without_the_key(tmp_path, code):
    found = [f for f in lint(tmp_path, DAG_WITH.format(keys=""), airflow_version="2") if f.code == code]
    assert len(found) == 1 and "default_args" not in found[0].help


def test_two_ignored_keys_are_named_together(tmp_path):
    code = DAG_WITH.format(keys='"max_active_tasks": 2, "concurrency": 2, ')
    found = [f for f in lint(tmp_path, code, airflow_version="2") if f.code == "DG103"]
    assert found[0].help.startswith("'max_active_tasks' and 'concurrency' in default_args are ignored by "
                                    "Airflow, set them on the DAG; ")
