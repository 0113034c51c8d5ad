"""What `dagguard check` imports: pre-commit pays every import on every commit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# A DAG with no SQL, no Jinja and no dagguard runtime helper: nothing below is needed for it.
SIMPLE_DAG = """\
import pendulum
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator

with DAG("simple", schedule="@daily", start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
         catchup=False, max_active_runs=1, max_active_tasks=2):
    EmptyOperator(task_id="start")
"""
HEAVY = ("sqlglot", "jinja2", "airflow", "rich", "pydantic", "dagguard.idempotent", "dagguard.doctor",
         "sqlalchemy", "pendulum", "libcst.codemod", "libcst.matchers")
# Runs the real console entry point in a fresh interpreter, then lists what got imported.
PROBE = """\
import json, sys
from dagguard.cli import main
sys.argv = ["dagguard", "check", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
print(json.dumps({"exit": code, "modules": sorted(sys.modules)}))
"""


def _imported_after_check(*args: str, cwd: Path) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["exit"], set(report["modules"])


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_checking_a_simple_dag_imports_none_of_the_heavy_modules(tmp_path: Path) -> None:
    (tmp_path / "simple.py").write_text(SIMPLE_DAG)
    code, modules = _imported_after_check("simple.py", cwd=tmp_path)
    assert code == 0
    assert "libcst" in modules  # the probe did check the file
    assert _heavy(modules) == []


@pytest.mark.parametrize("flag", ["--select", "--ignore"])
def test_plain_options_are_coerced_without_pydantic(tmp_path: Path, flag: str) -> None:
    (tmp_path / "simple.py").write_text(SIMPLE_DAG)
    code, modules = _imported_after_check("simple.py", flag, "DG101", "--now", "2026-12-01T00:00:00Z",
                                          cwd=tmp_path)
    assert code == 0
    assert _heavy(modules) == []


# What only a file that is checked needs; a run answered by the cache loads none of it.
CHECKER = ("libcst", "sqlglot", "jinja2", "croniter", "dagguard.engine.runner", "dagguard.model.dags.builder",
           "dagguard.rules.base", "dagguard.rules.dg101_catchup_without_end_date")


def _run_probe(*args: str, cwd: Path) -> tuple[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    *report, modules = done.stdout.strip().splitlines()
    return "\n".join(report), set(json.loads(modules)["modules"])


def test_a_warm_cached_run_imports_no_libcst_nor_any_rule(tmp_path: Path) -> None:
    (tmp_path / "simple.py").write_text(SIMPLE_DAG)
    (tmp_path / "flood.py").write_text(SIMPLE_DAG.replace('"simple"', '"flood"').replace("catchup=False", "catchup=True"))
    cold_report, cold = _run_probe(".", "--now", "2026-12-01T00:00:00Z", cwd=tmp_path)
    assert "libcst" in cold and "DG101" in cold_report   # the first run did check the files
    warm_report, warm = _run_probe(".", "--now", "2026-12-01T00:00:00Z", cwd=tmp_path)
    assert warm_report == cold_report
    assert sorted(m for m in warm if any(m == h or m.startswith(h + ".") for h in CHECKER)) == []
    assert _heavy(warm) == []


OUTPUT_FORMATS = ("concise", "full", "json", "json-lines", "junit", "grouped", "github", "gitlab", "sarif", "rdjson")


@pytest.mark.parametrize("output_format", OUTPUT_FORMATS)
def test_a_warm_cached_run_in_every_output_format_imports_no_libcst_nor_any_rule(tmp_path: Path,
                                                                                 output_format: str) -> None:
    # Issue 25: SARIF names every rule with its summary and severity; it read them from the rule
    # classes, so a warm SARIF run imported every rule and libcst (dagguard/rule_info.py now).
    (tmp_path / "flood.py").write_text(SIMPLE_DAG.replace("catchup=False", "catchup=True"))
    args = (".", "--now", "2026-12-01T00:00:00Z", "--output-format", output_format)
    cold_report, cold = _run_probe(*args, cwd=tmp_path)
    assert "libcst" in cold and "DG101" in cold_report
    warm_report, warm = _run_probe(*args, cwd=tmp_path)
    assert warm_report == cold_report
    assert sorted(m for m in warm if any(m == h or m.startswith(h + ".") for h in CHECKER)) == []
