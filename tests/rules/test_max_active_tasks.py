"""DG103: `concurrency` was max_active_tasks' name on Airflow 2 only."""

from __future__ import annotations

from tests.lint_helpers import codes, lint

OLD_NAME = """
    from airflow import DAG

    DAG("fan_out", schedule="@hourly", max_active_runs=1, concurrency=4)
"""


def test_concurrency_bounds_tasks_on_airflow_2(tmp_path):
    assert "DG103" not in codes(lint(tmp_path, OLD_NAME, airflow_version="2"))


def test_concurrency_is_rejected_not_counted_on_airflow_3(tmp_path):
    # Airflow 3.3's DAG raises TypeError on `concurrency`: DG106 reports the name, and the DAG
    # still has no max_active_tasks.
    found = codes(lint(tmp_path, OLD_NAME))
    assert "DG103" in found and "DG106" in found
