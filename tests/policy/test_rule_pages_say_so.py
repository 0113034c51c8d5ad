"""Each rule page says, on the line under its severity, whether the cluster policy applies it,
and that line agrees with the rules the policy runs."""

from __future__ import annotations

import pytest

from dagguard.policy.findings import POLICY_RULES
from dagguard.rules import RULE_CODES
from dagguard.rules.pages import page_text


@pytest.mark.parametrize("code", RULE_CODES)
def test_the_page_says_whether_the_policy_applies_the_rule(code):
    severity, policy = page_text(code).split("\n")[2:4]
    assert severity.startswith("Severity: ")
    assert policy.startswith("Cluster policy: applied (" if code in POLICY_RULES else "Cluster policy: not applied (")
    assert policy.endswith(")")



def test_checks_note_on_files_with_no_dag_it_sees_points_at_the_policy(tmp_path):
    import subprocess
    import sys

    from tests.policy.airflow_bag import REPO

    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "teams.py").write_text(
        "import airflow\nfrom platform_sdk.factory import make_dag\n\n"
        "for name in ['a', 'b']:\n    globals()[name] = make_dag(dag_id=name)\n")
    run = subprocess.run([sys.executable, "-m", "dagguard", "check", "--no-cache", "dags"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert "1 file imports airflow and looks like a DAG file but defines no DAG dagguard can see" in run.stdout
    assert "dagguard.policy checks the DAGs no static reader sees when Airflow loads them" in run.stdout
