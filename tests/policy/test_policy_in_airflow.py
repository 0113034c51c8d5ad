"""dagguard.policy under real Airflow 3.3: DagBags over folders of DAGs the linter cannot see
(a `globals()` loop over data read at parse time, YAML for dag-factory), with the policy in
airflow_local_settings.py or as the `airflow.policy` plugin entry."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from tests.policy.airflow_bag import REPO, airflow_home, load_bags

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

if not os.environ.get("CI"):
    pytest.importorskip("airflow")

# Two DAGs per pass of a loop over a JSON file read when the file is parsed: no static reader
# knows their arguments. Both catch up from 2025 with no end_date.
TEAMS = textwrap.dedent("""\
    import json
    from pathlib import Path

    import pendulum
    from airflow.sdk import DAG
    from airflow.providers.standard.operators.empty import EmptyOperator

    for team in json.loads((Path(__file__).parent / "teams.json").read_text()):
        with DAG(f"team_{team['name']}", schedule=team["schedule"], catchup=team["catchup"],
                 start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), max_active_runs=1, max_active_tasks=2) as dag:
            EmptyOperator(task_id="start")
        globals()[dag.dag_id] = dag
""")
TEAMS_JSON = '[{"name": "orders", "schedule": "@hourly", "catchup": true}]\n'
CLEAN = textwrap.dedent("""\
    import pendulum
    from airflow.sdk import DAG
    from airflow.providers.standard.operators.empty import EmptyOperator

    with DAG("clean_daily", schedule="@daily", start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=False,
             max_active_runs=1, max_active_tasks=2):
        EmptyOperator(task_id="start")
""")
# Warnings only (DG102, DG103): it loads, and the policy logs them.
WARNED = textwrap.dedent("""\
    import pendulum
    from airflow.sdk import DAG
    from airflow.providers.standard.operators.empty import EmptyOperator

    with DAG("warned_daily", schedule="@daily", start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=False):
        EmptyOperator(task_id="a") >> EmptyOperator(task_id="b")
""")
# A vendor's timetable that shares the name of one of Airflow's but not its attributes: the
# policy fails on it (a bug of the policy's, as far as the DAG's author can tell), and the DAG
# must load anyway.
BROKEN_TIMETABLE = textwrap.dedent("""\
    import pendulum
    from airflow.sdk import DAG
    from airflow.timetables.base import Timetable
    from airflow.providers.standard.operators.empty import EmptyOperator

    class CronTriggerTimetable(Timetable):
        @property
        def expression(self):
            raise RuntimeError("the vendor's timetable keeps its cron elsewhere")

    with DAG("odd_schedule", schedule=CronTriggerTimetable(), start_date=pendulum.datetime(2025, 1, 1, tz="UTC")):
        EmptyOperator(task_id="start")
""")

# DG303 as a loaded DAG can show it: a task renamed after it was added, so two tasks of the DAG
# answer to 'load' (two tasks *created* with one id never load: DuplicateTaskIdFound).
RENAMED = textwrap.dedent("""\
    import pendulum
    from airflow.sdk import DAG
    from airflow.providers.standard.operators.empty import EmptyOperator

    with DAG("renamed", schedule=None, start_date=pendulum.datetime(2025, 1, 1, tz="UTC")):
        EmptyOperator(task_id="load")
        EmptyOperator(task_id="load_copy").task_id = "load"
""")


# An @asset function is a DAG of its own, which cannot take max_active_runs or max_active_tasks
# (the decorator rejects both): the policy, as the linter, does not ask for them.
ASSET = textwrap.dedent("""\
    from airflow.sdk import asset

    @asset(schedule="@daily")
    def daily_prices():
        return 1
""")


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def _teams(folder: Path, **extra: str) -> Path:
    return _write(folder, {"teams.py": TEAMS, "teams.json": TEAMS_JSON, **extra})


def _lines(logs: list[list[str]], level: str) -> str:
    return "\n".join(message for lvl, message in logs if lvl == level)


@pytest.fixture(scope="module")
def bags(tmp_path_factory):
    """One interpreter, one DagBag per folder (and environment)."""
    tmp = tmp_path_factory.mktemp("policy")
    main = _teams(tmp / "main", **{
        "clean.py": CLEAN, "warned.py": WARNED, "broken.py": BROKEN_TIMETABLE, "renamed.py": RENAMED, "asset.py": ASSET,
        # A team folder of its own settings: DG101 is ignored there, below the DAGs folder.
        "team_b/dagguard.toml": 'ignore = ["DG101"]\n',
        "team_b/flood.py": TEAMS.replace('"teams.json"', '"../teams.json"').replace('f"team_', 'f"b_team_'),
    })
    warn = _teams(tmp / "warn", **{"dagguard.toml": 'mode = "warn"\n'})
    bad = _teams(tmp / "bad", **{"dagguard.toml": 'selct = ["DG1"]\n'})
    env_only = _teams(tmp / "env")
    severity = _write(tmp / "severity", {"warned.py": WARNED})
    home = airflow_home(tmp)
    names = ["main", "warn", "bad", "env_bad_value", "env_warn", "severity"]
    results = load_bags(home, [
        (main, {}), (warn, {}), (bad, {}),
        (env_only, {"AIRFLOW__DAGGUARD__MAX_CATCHUP_RUNS": "many"}),
        (env_only, {"AIRFLOW__DAGGUARD__MODE": "warn"}),
        (severity, {"AIRFLOW__DAGGUARD__SEVERITY": '{ DG102 = "error" }'}),
    ])
    return dict(zip(names, results)) | {"tmp": tmp}


def test_a_dag_from_a_globals_loop_is_refused_with_an_import_error_naming_dg101(bags):
    main = bags["main"]
    assert "team_orders" not in main["dags"]
    error = main["errors"]["teams.py"]
    assert error.startswith("AirflowClusterPolicyViolation: dagguard refused DAG 'team_orders' (DG101):")
    assert "DG101 DAG 'team_orders' enables catchup without end_date; catchup would queue ~" in error
    assert "help: set end_date=... to bound the backfill, or catchup=False" in error


def test_a_clean_dag_loads_and_nothing_is_logged_about_it(bags):
    main = bags["main"]
    assert "clean_daily" in main["dags"] and "clean.py" not in main["errors"]
    assert "clean_daily" not in str(main["logs"])


def test_warnings_are_logged_and_the_dag_loads(bags):
    main = bags["main"]
    assert "warned_daily" in main["dags"]
    warnings = _lines(main["logs"], "WARNING")
    assert "warned.py: DG102 DAG 'warned_daily' sets no max_active_runs; up to 16 of its runs can run at once" \
        in warnings
    assert "DG103 DAG 'warned_daily' sets no max_active_tasks; up to 16 of its tasks can run at once" in warnings


def test_an_asset_dag_is_not_asked_for_limits_it_cannot_take(bags):
    main = bags["main"]
    assert "daily_prices" in main["dags"] and "asset.py" not in main["errors"]
    assert "daily_prices" not in str(main["logs"])


def test_a_dagguard_toml_below_the_dags_folder_applies_to_its_folder(bags):
    main = bags["main"]
    assert "b_team_orders" in main["dags"]   # DG101 is ignored in team_b/
    assert "flood.py" not in main["errors"]


def test_a_failing_policy_lets_the_dag_load_and_logs_why(bags):
    main = bags["main"]
    assert "odd_schedule" in main["dags"] and "broken.py" not in main["errors"]
    errors = _lines(main["logs"], "ERROR")
    assert "dagguard: the cluster policy failed on DAG 'odd_schedule'; it loads unchecked" in errors


def test_a_task_renamed_onto_another_tasks_id_is_refused_as_dg303(bags):
    main = bags["main"]
    assert "renamed" not in main["dags"]
    assert main["errors"]["renamed.py"] == (
        "AirflowClusterPolicyViolation: dagguard refused DAG 'renamed' (DG303):\n"
        "DG303 DAG 'renamed' has two tasks with task_id 'load' (one was renamed after it was added to the DAG); "
        "the scheduler and the UI find only one of them by that id\n  help: give each task a unique task_id")

def test_mode_warn_only_logs_the_errors(bags):
    warn = bags["warn"]
    assert warn["dags"] == ["team_orders"] and warn["errors"] == {}
    assert "teams.py: DG101 DAG 'team_orders' enables catchup without end_date" in _lines(warn["logs"], "ERROR")


def test_a_bad_key_in_dagguard_toml_names_the_key_and_the_file_and_the_dag_still_loads(bags):
    bad = bags["bad"]
    assert bad["dags"] == ["team_orders"] and bad["errors"] == {}
    [message] = [m for level, m in bad["logs"] if level == "ERROR"]
    toml = bags["tmp"] / "bad" / "dagguard.toml"
    assert message.startswith(f"dagguard: {toml.resolve()}: unknown key 'selct' in [tool.dagguard] (known keys: ")
    assert message.endswith("; DAG 'team_orders' loads unchecked")


def test_a_bad_environment_value_names_the_variable(bags):
    bad = bags["env_bad_value"]
    assert bad["dags"] == ["team_orders"]
    assert ("dagguard: AIRFLOW__DAGGUARD__MAX_CATCHUP_RUNS: [tool.dagguard] max-catchup-runs must be a positive "
            "integer, got 'many'") in _lines(bad["logs"], "ERROR")


def test_mode_warn_from_the_environment(bags):
    assert bags["env_warn"]["dags"] == ["team_orders"] and bags["env_warn"]["errors"] == {}


def test_a_severity_override_makes_a_warning_refuse_the_dag(bags):
    result = bags["severity"]
    assert result["dags"] == []
    error = result["errors"]["warned.py"]
    assert error.startswith("AirflowClusterPolicyViolation: dagguard refused DAG 'warned_daily' (DG102):")
    assert "DG103" not in error   # still a warning: logged
    assert "DG103 DAG 'warned_daily'" in _lines(result["logs"], "WARNING")


YAML = textwrap.dedent("""\
    default:
      default_args:
        owner: data
        start_date: 2025-01-01
      catchup: true
      schedule: "@hourly"
    yaml_orders:
      max_active_runs: 1
      max_active_tasks: 2
      tasks:
        - task_id: extract
          operator: airflow.providers.standard.operators.empty.EmptyOperator
    yaml_signups:
      catchup: false
      schedule: "@daily"
      max_active_runs: 1
      max_active_tasks: 2
      tasks:
        - task_id: extract
          operator: airflow.providers.standard.operators.empty.EmptyOperator
""")
LOADER = textwrap.dedent("""\
    # The airflow DAGs declared in YAML beside this file, built by dag-factory.
    from pathlib import Path

    from dagfactory import load_yaml_dags

    load_yaml_dags(globals_dict=globals(), dags_folder=str(Path(__file__).parent))
""")


def test_a_dag_factory_yaml_dag_is_refused_and_its_clean_sibling_loads(tmp_path):
    pytest.importorskip("dagfactory")
    folder = _write(tmp_path / "dags", {"pipelines.yml": YAML, "load_yaml.py": LOADER})
    [result] = load_bags(airflow_home(tmp_path), [(folder, {})])
    assert result["dags"] == ["yaml_signups"]
    error = result["errors"]["load_yaml.py"]
    assert "dagguard refused DAG 'yaml_orders' (DG101)" in error
    assert "DG101 DAG 'yaml_orders' enables catchup without end_date; catchup would queue ~" in error


def _entry_point_distribution(folder: Path) -> Path:
    """An installed distribution carrying pyproject.toml's `airflow.policy` entry, as pip writes it."""
    entries = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["airflow.policy"]
    info = folder / "dagguard_policy_entry-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dagguard-policy-entry\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[airflow.policy]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()))
    return folder


def test_the_plugin_entry_applies_the_policy_only_when_enabled(tmp_path):
    folder = _teams(tmp_path / "dags")
    site = _entry_point_distribution(tmp_path / "site")
    home = airflow_home(tmp_path, local_settings=None)
    off, on = load_bags(home, [(folder, {}), (folder, {"AIRFLOW__DAGGUARD__ENABLED": "true"})], python_path=[site])
    assert off["dags"] == ["team_orders"] and off["errors"] == {}
    assert on["dags"] == []
    assert "dagguard refused DAG 'team_orders' (DG101)" in on["errors"]["teams.py"]
