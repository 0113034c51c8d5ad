"""What dagguard.policy costs to import, what it declares to Airflow, and that it leaves DAGs as
it found them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from dagguard.policy import plugin
from dagguard.policy.findings import POLICY_RULES
from tests.policy.airflow_bag import REPO, airflow_home

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HEAVY = ("libcst", "sqlglot", "jinja2", "croniter", "airflow", "pendulum", "dagguard.engine.runner",
         "dagguard.model.dags.builder", "dagguard.rules.base")


def test_importing_the_policy_loads_none_of_the_linters_heavy_modules():
    probe = "import json, sys; import dagguard.policy, dagguard.policy.plugin; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, check=True)
    modules = json.loads(done.stdout)
    assert [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)] == []


def test_the_policys_severities_are_the_rules_own():
    from dagguard.rules import RULES_BY_CODE

    assert POLICY_RULES == {code: RULES_BY_CODE[code].severity for code in POLICY_RULES}


def test_pyproject_declares_the_plugin_entry_with_airflows_marker():
    entries = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["airflow.policy"]
    assert entries == {"dagguard": "dagguard.policy.plugin"}
    # pluggy finds hook implementations by this attribute (HookimplMarker("airflow.policy")).
    assert hasattr(plugin.dag_policy, "airflow.policy_impl")


@pytest.mark.parametrize(("value", "on"), [("true", True), ("True", True), ("1", True), ("yes", True),
                                           ("false", False), ("", False), ("0", False)])
def test_the_plugin_is_off_unless_enabled(value, on):
    assert plugin.enabled({"AIRFLOW__DAGGUARD__ENABLED": value}) is on
    assert plugin.enabled({}) is False


# Serialises each DAG as the DAG processor stores it, runs the policy, serialises it again.
UNCHANGED = textwrap.dedent("""\
    import json, logging, sys, warnings
    warnings.simplefilter("ignore")
    import pendulum
    from airflow.sdk import DAG
    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
    from airflow.serialization.serialized_objects import DagSerialization
    from dagguard.policy import dag_policy

    records = []
    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())
    logging.getLogger("dagguard.policy").addHandler(Keep())

    with DAG("flood", schedule="@hourly", start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=True) as dag:
        SQLExecuteQueryOperator(task_id="copy", conn_id="wh",
                                sql="SELECT * FROM t WHERE ts >= '{{ data_interval_start }}' AND ts < '{{ data_interval_end }}'")
        EmptyOperator(task_id="done")
    before = json.dumps(DagSerialization.to_dict(dag), sort_keys=True, default=str)
    dag_policy(dag)   # AIRFLOW__DAGGUARD__MODE=warn: logs, returns
    after = json.dumps(DagSerialization.to_dict(dag), sort_keys=True, default=str)
    dag_policy(object())   # not a DAG: the policy fails, logs it, returns
    print("RESULT" + json.dumps({"same": before == after, "logs": records}))
""")


def test_the_policy_never_changes_a_dag_and_survives_an_object_that_is_no_dag(tmp_path):
    pytest.importorskip("airflow")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW__", "AIRFLOW_HOME"))}
    env.update(AIRFLOW_HOME=str(airflow_home(tmp_path, local_settings=None)), PYTHONPATH=str(REPO),
               AIRFLOW__DAGGUARD__MODE="warn", AIRFLOW__CORE__LOAD_EXAMPLES="False")
    run = subprocess.run([sys.executable, "-c", UNCHANGED], capture_output=True, text=True, env=env, timeout=300,
                         cwd=tmp_path)
    line = next((line for line in run.stdout.splitlines() if line.startswith("RESULT")), None)
    assert line is not None, run.stderr[-3000:]
    result = json.loads(line[len("RESULT"):])
    assert result["same"] is True
    codes = sorted(message.split(": ")[2].split(" ")[0] for message in result["logs"][:-1])
    assert codes == ["DG101", "DG102", "DG103", "DG206"]
    assert result["logs"][-1].startswith("dagguard: the cluster policy failed on DAG <object object at ")
