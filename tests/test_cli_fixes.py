"""`dagguard check` with ruff's fix flags: --fix, --unsafe-fixes, --diff, --fix-only,
--show-fixes, --exit-non-zero-on-fix, --add-noqa, and `--fix -` on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LEGACY = """\
from airflow import DAG

with DAG("legacy", schedule_interval="@daily", max_active_runs=1, max_active_tasks=2):
    pass
"""
FLOOD = """\
import pendulum
from airflow.sdk import DAG

with DAG("flood", schedule="@hourly", start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=True,
         max_active_runs=1, max_active_tasks=2):
    pass
"""


def dagguard(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return subprocess.run([sys.executable, "-m", "dagguard", *args, "--now", "2026-01-01T00:00Z"], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=120, input=stdin)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "legacy.py").write_text(LEGACY)
    (tmp_path / "dags" / "flood.py").write_text(FLOOD)
    return tmp_path


def test_check_marks_safe_fixes_and_counts_the_hidden_unsafe_ones(project):
    run = dagguard("check", "dags", cwd=project)
    assert run.returncode == 1
    assert "dags/legacy.py:3:20: DG106 [*] DAG 'legacy' passes schedule_interval" in run.stdout
    assert "DG101 DAG 'flood'" in run.stdout   # unsafe: no marker without --unsafe-fixes
    assert run.stdout.splitlines()[-1] == ("[*] 1 fixable with the `--fix` option "
                                           "(1 hidden fix can be enabled with the `--unsafe-fixes` option)")
    unsafe = dagguard("check", "dags", "--unsafe-fixes", cwd=project)
    assert "DG101 [*] DAG 'flood'" in unsafe.stdout
    assert unsafe.stdout.splitlines()[-1] == "[*] 2 fixable with the `--fix` option"


def test_json_fixable_is_true_for_findings_with_a_fix(project):
    found = json.loads(dagguard("check", "dags", "--format", "json", cwd=project).stdout)
    assert {(f["code"], f["fixable"]) for f in found} == {("DG106", True), ("DG101", True)}


def test_fix_applies_safe_fixes_only_and_reports_what_is_left(project):
    run = dagguard("check", "dags", "--fix", cwd=project)
    assert run.returncode == 1, run.stderr    # DG101 is left
    assert 'schedule="@daily"' in (project / "dags" / "legacy.py").read_text()
    assert "catchup=True" in (project / "dags" / "flood.py").read_text()
    assert "(0 DAGs clean, 1 fixed, 1 remaining)" in run.stdout or "1 fixed, 1 remaining" in run.stdout


def test_fix_with_unsafe_fixes_clears_everything_and_exit_non_zero_on_fix(project):
    run = dagguard("check", "dags", "--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "--show-fixes", cwd=project)
    assert run.returncode == 1
    assert "All checks passed (2 problems fixed)" in run.stdout
    assert "- dags/flood.py:\n    1 × DG101 (catchup-without-end-date)" in run.stdout
    again = dagguard("check", "dags", "--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", cwd=project)
    assert again.returncode == 0, again.stdout


def test_diff_prints_the_diff_and_writes_nothing(project):
    before = (project / "dags" / "legacy.py").read_text()
    run = dagguard("check", "dags", "--diff", cwd=project)
    assert run.returncode == 1
    assert run.stdout.startswith("--- dags/legacy.py\n+++ dags/legacy.py\n")
    assert '-with DAG("legacy", schedule_interval="@daily"' in run.stdout
    assert "Would fix 1 problem." in run.stderr
    assert (project / "dags" / "legacy.py").read_text() == before
    dagguard("check", "dags", "--fix", cwd=project)
    assert dagguard("check", "dags", "--diff", cwd=project).returncode == 0


def test_fix_only_reports_only_what_it_fixed(project):
    run = dagguard("check", "dags", "--fix-only", cwd=project)
    assert run.returncode == 0
    assert run.stdout == "Fixed 1 problem.\n"


def test_fix_on_stdin_prints_the_fixed_source_and_findings_on_stderr(project):
    run = dagguard("check", "--fix", "--stdin-filename", "dags/legacy.py", "-", cwd=project, stdin=LEGACY)
    assert run.stdout == LEGACY.replace("schedule_interval", "schedule")
    assert "All checks passed (1 problem fixed)" in run.stderr
    assert run.returncode == 0
    flood = dagguard("check", "--fix", "--stdin-filename", "dags/flood.py", "-", cwd=project, stdin=FLOOD)
    assert flood.stdout == FLOOD and flood.returncode == 1
    assert flood.stderr.startswith("dags/flood.py:4:")


def test_add_noqa_then_check_passes(project):
    run = dagguard("check", "dags", "--add-noqa", cwd=project)
    assert run.returncode == 0 and "Added 2 noqa directives." in run.stderr
    assert "# noqa: DG106" in (project / "dags" / "legacy.py").read_text()
    assert dagguard("check", "dags", cwd=project).returncode == 0


def test_unknown_noqa_code_is_a_warning_on_stderr(project):
    # A file dagguard parses: one that cannot touch a DAG is skipped unread.
    (project / "dags" / "typo.py").write_text("import airflow\nx = 1  # noqa: DG1O1\n")
    run = dagguard("check", "dags/typo.py", cwd=project)
    assert run.returncode == 0
    assert "dagguard: warning: dags/typo.py:2: `# noqa:` names no rule code ('DG1O1'), so it silences nothing" in run.stderr


def test_fix_on_stdin_leaves_a_force_excluded_file_alone(project):
    # ruff hands an excluded file's source back unchanged and reports nothing on it.
    (project / "pyproject.toml").write_text('[tool.dagguard]\nexclude = ["legacy.py"]\n')
    args = ("check", "--fix", "--stdin-filename", "dags/legacy.py", "--force-exclude", "-")
    run = dagguard(*args, cwd=project, stdin=LEGACY)
    assert (run.returncode, run.stdout) == (0, LEGACY)
    assert "DG106" not in run.stderr and "fixed" not in run.stderr
    diff = dagguard("check", "--diff", "--stdin-filename", "dags/legacy.py", "--force-exclude", "-",
                    cwd=project, stdin=LEGACY)
    assert (diff.returncode, diff.stdout) == (0, "")
    # Without --force-exclude the file given is fixed, as before.
    assert dagguard(*[a for a in args if a != "--force-exclude"], cwd=project, stdin=LEGACY).stdout != LEGACY


FACTORY = """\
import pendulum
from airflow.sdk import DAG


def create_dag(dag_id, **kwargs):
    return DAG(dag_id, schedule="@hourly", start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), **kwargs)


def fixed_dag(dag_id):
    return DAG(dag_id, schedule="@hourly", start_date=pendulum.datetime(2025, 1, 1, tz="UTC"))
"""


def test_factory_made_dags_are_fixed_in_the_call_when_the_factory_takes_the_keyword(tmp_path):
    # The factories live outside the checked folder: only the callers are checked and fixed.
    (tmp_path / "pyproject.toml").write_text("[tool.dagguard]\n")   # the module root
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "factory.py").write_text(FACTORY)
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "kw.py").write_text("from common.factory import create_dag\n\ndag = create_dag('kw')\n")
    (tmp_path / "dags" / "fixed.py").write_text("from common.factory import fixed_dag\n\ndag = fixed_dag('fixed')\n")
    check = dagguard("check", "dags", "--unsafe-fixes", cwd=tmp_path)
    assert "dags/kw.py:3:7: DG102 [*] DAG 'kw' (made by common.factory.create_dag)" in check.stdout
    assert "dags/fixed.py:3:7: DG102 DAG 'fixed' (made by common.factory.fixed_dag)" in check.stdout
    run = dagguard("check", "dags", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert (tmp_path / "dags" / "kw.py").read_text().endswith("create_dag('kw', max_active_runs=1, max_active_tasks=4)\n")
    assert (tmp_path / "dags" / "fixed.py").read_text().endswith("fixed_dag('fixed')\n")
    assert "dags/kw.py" not in run.stdout and "dags/fixed.py:3:7: DG102" in run.stdout
    again = dagguard("check", "dags", "--unsafe-fixes", cwd=tmp_path)
    assert "[*]" not in again.stdout and "dags/kw.py" not in again.stdout
    assert (tmp_path / "common" / "factory.py").read_text() == FACTORY
