"""The README's cluster policy section, run as written: its airflow_local_settings.py, its
dagguard.toml and its environment variables, with Airflow 3.3's DagBag."""

from __future__ import annotations

import os
import re
import shlex

import pytest

from dagguard.policy.settings import load_settings
from tests.policy.airflow_bag import airflow_home, load_bags
from tests.policy.test_policy_in_airflow import TEAMS, WARNED, _entry_point_distribution, _teams

readme = pytest.importorskip("tests.test_readme_snippets")

HEADING = "## Cluster policy: `dagguard.policy`, for the DAGs no static reader sees"


def _exports(block: str) -> dict[str, str]:
    words = [shlex.split(line) for line in block.splitlines() if line.startswith("export ")]
    return dict(w[1].split("=", 1) for w in words)


def _count_free(text: str) -> str:
    return re.sub(r"~[\d,]+ runs", "~N runs", text.strip())


def test_the_local_settings_and_dagguard_toml_snippets(tmp_path):
    if not os.environ.get("CI"):
        pytest.importorskip("airflow")
    local_settings = readme.snippet(HEADING, "python", "# airflow_local_settings.py")
    toml = readme.snippet(HEADING, "toml", "# dags/dagguard.toml")
    legacy = TEAMS.replace('"teams.json"', '"../teams.json"').replace('f"team_', 'f"legacy_')
    folder = _teams(tmp_path / "dags", **{"warned.py": WARNED, "dagguard.toml": toml, "legacy/flood.py": legacy})
    [result] = load_bags(airflow_home(tmp_path, local_settings), [(folder, {})])
    assert result["dags"] == ["legacy_orders"]   # per-file-ignores = { "legacy/*" = ["DG101"] }
    # The import error shown in the README, but for the count, which grows with the date.
    shown = readme.snippet(HEADING, "", "AirflowClusterPolicyViolation")
    assert _count_free(result["errors"]["teams.py"]) == _count_free(shown)
    # severity = { DG102 = "error" } refuses it; ignore = ["DG103"] keeps DG103 out of it and the log.
    assert result["errors"]["warned.py"].startswith("AirflowClusterPolicyViolation: dagguard refused DAG "
                                                    "'warned_daily' (DG102):")
    assert "DG103" not in str(result)


def test_the_plugin_switch_snippet(tmp_path):
    if not os.environ.get("CI"):
        pytest.importorskip("airflow")
    switch = _exports(readme.snippet(HEADING, "bash", "export AIRFLOW__DAGGUARD__ENABLED"))
    folder = _teams(tmp_path / "dags")
    site = _entry_point_distribution(tmp_path / "site")
    [result] = load_bags(airflow_home(tmp_path, local_settings=None), [(folder, switch)], python_path=[site])
    assert result["dags"] == [] and "(DG101)" in result["errors"]["teams.py"]


def test_the_environment_snippet(tmp_path):
    variables = _exports(readme.snippet(HEADING, "bash", "export AIRFLOW__DAGGUARD__MODE"))
    settings = load_settings(tmp_path / "x.py", tmp_path, variables)
    assert settings.mode == "warn" and settings.lint.ignore == ("DG102", "DG103")
