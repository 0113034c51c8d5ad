"""The README's pre-commit, GitHub Actions, GitLab and ruff snippets, run as written.

Each snippet is read out of README.md here, so the README and what is tested cannot drift.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli import CLEAN, INCIDENT

yaml = pytest.importorskip("yaml")

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")


def snippet(heading: str, language: str, first_line: str = "") -> str:
    """The first ```language block under `heading` (whose first line is `first_line`, if given)."""
    section = README.split(f"\n{heading}\n", 1)[1]
    section = re.split(r"\n#{2,3} ", section, maxsplit=1)[0]  # "# " starts YAML comments too
    for block in re.findall(rf"^```{language}\n(.*?)^```$", section, re.MULTILINE | re.DOTALL):
        if block.startswith(first_line):
            return block
    raise AssertionError(f"no ```{language} block starting {first_line!r} under {heading!r}")


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "dags").mkdir(parents=True)
    (project / "dags" / "incident.py").write_text(INCIDENT)
    (project / "dags" / "clean.py").write_text(CLEAN)
    return project


def _run_dagguard_commands(commands: list[str], cwd: Path) -> list[subprocess.CompletedProcess]:
    """Run the snippet's `dagguard ...` command lines (the install lines need the network)."""
    runs = []
    for command in commands:
        words = shlex.split(command)
        if words[0] == "dagguard":
            runs.append(subprocess.run([sys.executable, "-m", "dagguard", *words[1:]], cwd=cwd,
                                       capture_output=True, text=True, timeout=120))
    assert runs, f"no dagguard command in {commands}"
    return runs


def test_github_actions_job_uploads_a_valid_sarif_file(tmp_path):
    from tests.report.test_sarif_schema import _validator

    workflow = yaml.safe_load(snippet("### CI: GitHub code scanning and GitLab code quality", "yaml",
                                      "# .github/workflows/dagguard.yml"))
    [job] = workflow["jobs"].values()
    assert job["permissions"]["security-events"] == "write"
    steps = job["steps"]
    [upload] = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert "cancelled()" in upload["if"] or "always()" in upload["if"]  # uploads when the check fails
    project = _project(tmp_path)
    [run] = _run_dagguard_commands([s["run"] for s in steps if "run" in s], project)
    assert run.returncode == 1, run.stderr  # findings fail the job
    log = json.loads((project / upload["with"]["sarif_file"]).read_text())
    assert list(_validator().iter_errors(log)) == []
    assert {r["ruleId"] for r in log["runs"][0]["results"]} == {"DG101", "DG102", "DG103"}


def test_gitlab_job_publishes_a_code_quality_report(tmp_path):
    config = yaml.safe_load(snippet("### CI: GitHub code scanning and GitLab code quality", "yaml",
                                    "# .gitlab-ci.yml"))
    [job] = config.values()
    assert job["artifacts"]["when"] == "always"
    project = _project(tmp_path)
    [run] = _run_dagguard_commands(job["script"], project)
    assert run.returncode == 1, run.stderr
    issues = json.loads((project / job["artifacts"]["reports"]["codequality"]).read_text())
    assert len(issues) == 3
    for issue in issues:  # the fields GitLab requires
        assert issue["description"] and issue["check_name"] and issue["fingerprint"]
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert issue["location"]["path"] == "dags/incident.py" and issue["location"]["lines"]["begin"] >= 1


def _ruff() -> str:
    found = shutil.which("ruff", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if found is None:
        pytest.skip("ruff is not installed")
    return found


def test_ruff_keeps_dagguards_noqa_comments_with_the_readme_setting(tmp_path):
    table = snippet("### ruff and dagguard's noqa comments", "toml")
    (tmp_path / "dag.py").write_text("x = 1  # noqa: DG101\n")

    def unused_noqa(pyproject: str) -> str:
        (tmp_path / "pyproject.toml").write_text(pyproject)
        run = subprocess.run([_ruff(), "check", "--no-cache", "--select", "RUF100,RUF102", "--output-format",
                              "concise", "dag.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        return run.stdout

    assert "RUF10" in unused_noqa("")  # the proof that the check can fail
    assert "RUF10" not in unused_noqa(table)


def _git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def test_pre_commit_snippet_runs_as_written(tmp_path):
    """Regression: the snippet pinned rev: v0.1.0, which did not exist, so `pre-commit run` failed."""
    pytest.importorskip("pre_commit")
    from dagguard import __version__

    text = snippet("### pre-commit", "yaml")
    [hook_repo] = yaml.safe_load(text)["repos"]
    rev = hook_repo["rev"]
    # The README names the tag maintainers push for this version (or a commit sha).
    assert rev == f"v{__version__}" or re.fullmatch(r"[0-9a-f]{40}", rev)
    assert f"tag v{__version__}" in README
    # This repository as it would be hosted: a clone with the release tag the README asks for.
    hosted = tmp_path / "hosted"
    _git("clone", "--quiet", str(REPO), str(hosted), cwd=tmp_path)
    if not re.fullmatch(r"[0-9a-f]{40}", rev) and not _git("tag", "--list", rev, cwd=hosted).strip():
        _git("tag", rev, cwd=hosted)
    project = _project(tmp_path)
    (project / ".pre-commit-config.yaml").write_text(text.replace(hook_repo["repo"], str(hosted)))
    _git("init", "--quiet", cwd=project)
    _git("add", "-A", cwd=project)
    run = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=project,
                         capture_output=True, text=True, timeout=900,
                         env={**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")})
    assert run.returncode == 1, run.stdout + run.stderr
    assert "dags/incident.py:8:5: DG101 " in run.stdout
    assert "dags/clean.py" not in run.stdout


def test_the_gaps_example_prints_what_it_says(tmp_path):
    import sqlite3
    from datetime import datetime, timedelta, timezone

    from dagguard.idempotent import Interval, write_interval

    conn = sqlite3.connect(tmp_path / "warehouse.db")
    conn.execute("CREATE TABLE signups (user_id INTEGER, signed_up_at TEXT)")
    conn.commit()
    for day in (1, 2, 4, 7):   # a backfill of the first week that failed on days 3, 5 and 6
        start = datetime(2026, 1, day, tzinfo=timezone.utc)
        write_interval(conn, "signups", [{"user_id": day, "signed_up_at": start + timedelta(hours=1)}],
                       Interval(start, start + timedelta(days=1)), time_column="signed_up_at")
    conn.close()
    [run] = _run_dagguard_commands([snippet("### Finding gaps", "sh").strip()], tmp_path)
    assert run.returncode == 1, run.stderr
    assert run.stdout == snippet("### Finding gaps", "text")


def test_the_delta_lake_example_prints_what_it_says(tmp_path):
    pytest.importorskip("deltalake")
    code = snippet("### Delta Lake tables", "python")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n") == ["1 1", "0 1", ""]  # the rerun committed nothing


@pytest.mark.spark
def test_the_spark_example_prints_what_it_says(spark, capsys):
    """Run in the test session's SparkSession (the snippet's getOrCreate() returns it)."""
    code = snippet("### Apache Spark", "python")
    try:
        exec(compile(code, "README.md", "exec"), {})
    finally:
        spark.sql("DROP DATABASE IF EXISTS readme CASCADE")
    assert capsys.readouterr().out.split("\n") == ["1000 0 0", "0 0 0", "0 1 0", ""]


def test_partitioned_dags_listing_is_what_dags_prints_for_airflow_s_example(tmp_path):
    airflow = pytest.importorskip("airflow")
    block = snippet("### Partitioned DAGs and `@asset` (Airflow 3.2+)", "", "$ dagguard dags")
    command, *shown = block.strip().splitlines()
    shutil.copy(Path(airflow.__file__).parent / "example_dags" / "example_asset_partition.py", tmp_path)
    [run] = _run_dagguard_commands([command.removeprefix("$ ")], tmp_path)
    assert run.returncode == 0, run.stderr
    printed = run.stdout.splitlines()
    assert len(printed) == 21
    assert all(line in printed for line in shown)


@pytest.mark.parametrize("heading, printed", [("### Late data: lookback", "2026-01-01T00:00:00+00:00 2"),
                                              ("### Backfills in batches", "2 2026-03-02")])
def test_the_lookback_and_batch_examples_print_what_they_say(tmp_path, heading, printed):
    code = snippet(heading, "python")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr
    assert result.stdout == printed + "\n"
    assert f"prints `{printed}`" in README.split(f"\n{heading}\n", 1)[1]
