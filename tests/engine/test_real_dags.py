"""Real DAG files written by others: Airflow's own example DAGs, as installed by the test extra."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from dagguard.api import check_paths
from dagguard.config import Settings
from tests.lint_helpers import NOW


def installed_example_dag_folders() -> list[Path]:
    spec = importlib.util.find_spec("airflow")
    if spec is None or not spec.submodule_search_locations:
        if os.environ.get("CI"):
            pytest.fail("apache-airflow must be installed in CI (the test extra)")
        pytest.skip("apache-airflow is not installed")
    root = Path(next(iter(spec.submodule_search_locations)))
    return sorted(p for p in root.rglob("example_dags") if p.is_dir())


def test_airflow_example_dags_check_without_crash_or_parse_error():
    folders = installed_example_dag_folders()
    result = check_paths(folders, settings=Settings(), now=NOW)
    assert result.files_checked > 50
    assert result.internal_errors == ()
    assert not [f for f in result.findings if f.code == "DG000"]
    # Airflow's examples are written for Airflow 3: none passes an argument Airflow 3 rejects.
    assert not [f for f in result.findings if f.code in ("DG106", "DG109") and f.severity == "error"]
    assert result.dag_count > 50
