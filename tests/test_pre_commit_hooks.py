"""The pre-commit hooks, driven by the real pre-commit: `dagguard` fails on a bad DAG,
`dagguard-fix` rewrites it, then `dagguard` passes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")
BAD = """\
from airflow import DAG

with DAG("legacy", schedule_interval=None, max_active_runs=1, max_active_tasks=2):
    pass
"""

pytestmark = pytest.mark.skipif(not PRE_COMMIT.exists() or shutil.which("git") is None,
                                reason="needs pre-commit (the test extra) and git")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _try_repo(hook: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(PRE_COMMIT), "try-repo", str(REPO), hook, "--all-files"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)


def test_dagguard_fails_dagguard_fix_rewrites_then_dagguard_passes(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project)
    (project / "dag.py").write_text(BAD)
    _git("add", "dag.py", cwd=project)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    env.pop("PYTHONPATH", None)   # the hooks run from pre-commit's own install of this repository

    first = _try_repo("dagguard", project, env)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "DG106 [*]" in first.stdout

    fixing = _try_repo("dagguard-fix", project, env)
    assert "files were modified by this hook" in fixing.stdout, fixing.stdout + fixing.stderr
    assert (project / "dag.py").read_text() == BAD.replace("schedule_interval", "schedule")

    _git("add", "dag.py", cwd=project)
    last = _try_repo("dagguard", project, env)
    assert last.returncode == 0, last.stdout + last.stderr
