"""The command line as users and CI see it: exit codes, formats, stdout purity."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
INCIDENT = """\
import pendulum
from airflow.sdk import DAG

with DAG(
    dag_id="orders_hourly",
    schedule="@hourly",
    start_date=pendulum.datetime(2025, 10, 1, tz="UTC"),
    catchup=True,
):
    pass
"""
CLEAN = """\
from airflow.sdk import DAG

with DAG("clean", schedule=None, max_active_runs=1, max_active_tasks=2):
    pass
"""
FIELDS = {"code": str, "rule": str, "severity": str, "path": str, "line": int, "column": int,
          "end_line": int, "end_column": int, "message": str, "dag_id": (str, type(None)), "fixable": bool}


def dagguard(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return subprocess.run([sys.executable, "-m", "dagguard", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=120)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "incident.py").write_text(INCIDENT)
    (tmp_path / "dags" / "clean.py").write_text(CLEAN)
    return tmp_path


def test_findings_exit_1_with_ruff_shaped_lines_and_summary(project):
    run = dagguard("check", "dags", "--now", "2026-11-30T00:00:00Z", cwd=project)
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert "dags/incident.py:4:6: DG102 DAG 'orders_hourly' sets no max_active_runs; up to 16 of its runs can run at once" in lines
    assert any(line.startswith("dags/incident.py:8:5: DG101 ") and "~10,000 runs" in line for line in lines)
    assert lines[-2] == "Found 3 problems in 1 file (1 DAG clean)"
    assert lines[-1] == "No fixes available (3 hidden fixes can be enabled with the `--unsafe-fixes` option)"
    assert "\x1b[" not in run.stdout  # no colour when not a TTY
    assert run.stderr == ""


def test_clean_tree_exits_0(project):
    run = dagguard("check", "dags/clean.py", cwd=project)
    assert run.returncode == 0
    assert run.stdout.strip() == "All checks passed: 1 file, 1 DAG clean"


def test_json_output_is_only_a_json_array_with_the_documented_fields(project):
    run = dagguard("check", "dags", "--format", "json", "--now", "2026-11-30T00:00Z", cwd=project)
    assert run.returncode == 1
    findings = json.loads(run.stdout)
    assert len(findings) == 3
    for finding in findings:
        for field, kind in FIELDS.items():
            assert isinstance(finding[field], kind), field
        assert finding["severity"] in ("error", "warning")
        assert finding["line"] >= 1 and finding["column"] >= 1
        assert finding["dag_id"] == "orders_hourly"
    assert [f["code"] for f in findings] == ["DG102", "DG103", "DG101"]


def test_select_and_ignore_on_the_command_line(project):
    run = dagguard("check", "dags", "--format", "json", "--select", "DG1", "--ignore", "DG103,DG102", cwd=project)
    assert [f["code"] for f in json.loads(run.stdout)] == ["DG101"]


def test_sarif_and_github_formats(project):
    sarif = json.loads(dagguard("check", "dags", "--format", "sarif", cwd=project).stdout)
    results = sarif["runs"][0]["results"]
    assert sarif["version"] == "2.1.0" and len(results) == 3
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "dags/incident.py"
    github = dagguard("check", "dags", "--format", "github", cwd=project).stdout.splitlines()
    assert github[0].startswith("::warning title=dagguard (DG102),file=dags/incident.py,line=4,col=6,")


@pytest.mark.parametrize("args", [
    ("check", "does-not-exist"),
    ("check", "dags", "--format", "xml"),
    ("check", "dags", "--now", "yesterday"),
    ("check", "dags", "--config", "missing.toml"),
])
def test_usage_errors_exit_2_with_one_line_and_no_traceback(project, args):
    run = dagguard(*args, cwd=project)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr and run.stdout == ""
    assert run.stderr.startswith("dagguard: error: ") and len(run.stderr.strip().splitlines()) == 1


def test_bad_config_key_exits_2_naming_key_and_file(project):
    (project / "pyproject.toml").write_text("[tool.dagguard]\nmax-catchup = 10\n")
    run = dagguard("check", "dags", cwd=project)
    assert run.returncode == 2
    assert "'max-catchup'" in run.stderr and "pyproject.toml" in run.stderr


def test_config_from_pyproject_is_applied(project):
    (project / "pyproject.toml").write_text('[tool.dagguard]\nignore = ["DG102", "DG103"]\n')
    run = dagguard("check", "dags", "--format", "json", cwd=project)
    assert [f["code"] for f in json.loads(run.stdout)] == ["DG101"]


def test_exit_zero(project):
    assert dagguard("check", "dags", "--exit-zero", cwd=project).returncode == 0


def test_rules_lists_every_rule_and_rule_prints_its_page(project):
    from dagguard.rules import ALL_RULES

    listing = dagguard("rules", cwd=project).stdout.splitlines()
    assert [line.split("\t")[0] for line in listing] == [r.code for r in ALL_RULES]
    page = dagguard("rule", "DG101", cwd=project)
    assert page.returncode == 0 and page.stdout.startswith("# DG101 catchup-without-end-date")
    assert dagguard("rule", "catchup-without-end-date", cwd=project).stdout == page.stdout
    assert dagguard("rule", "DG999", cwd=project).returncode == 2


def test_linter_does_not_import_airflow_or_runtime_helpers(project):
    code = ("import sys; from dagguard.api import check_paths; check_paths(['dags']); "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('airflow', 'sqlalchemy', 'duckdb', 'psycopg') "
            "or m.startswith(('dagguard.idempotent', 'dagguard.doctor'))]; print(bad)")
    run = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True)
    assert run.stdout.strip() == "[]", run.stderr


def test_a_symlink_loop_in_the_folder_loses_no_other_file(tmp_path, monkeypatch):
    """Regression: display_path's resolve() raised RuntimeError and the whole run was lost."""
    from dagguard.api import check_paths
    from dagguard.config import Settings

    (tmp_path / "good.py").write_text("from airflow.sdk import DAG\nDAG('d', schedule=None)\n")
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    monkeypatch.chdir(tmp_path)
    result = check_paths([tmp_path], settings=Settings())
    assert "DG102" in {f.code for f in result.findings if f.path.endswith("good.py")}
