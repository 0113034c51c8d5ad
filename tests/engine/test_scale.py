"""5,000 files of every kind in one run (issue 15's robustness at scale): no crash, no
traceback, every bad file one DG000, the exit code right, the same with one job and two."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LARGE = {98, 99, 2098, 2099}    # four files of 1 MB

DAG = """\
import pendulum
from airflow import DAG
from airflow.providers.standard.operators.bash import BashOperator

with DAG(dag_id="scale_{n}", schedule="@daily", start_date=pendulum.datetime(2025, 1, 1),
         catchup=False, max_active_runs=1, max_active_tasks=2):
    BashOperator(task_id="t", bash_command="echo {{{{ ds }}}}")
"""


def _corpus(root: Path) -> dict[str, int]:
    """Writes 5,000 files; returns how many of each kind that must be a DG000."""
    rng = random.Random(5000)
    kinds = {"binary": 0, "syntax": 0, "deep": 0}
    for n in range(5000):
        folder = root / f"pkg_{n % 50:02d}"
        folder.mkdir(exist_ok=True)
        path = folder / f"file_{n:04d}.py"
        kind = n % 100
        if kind < 60:
            path.write_text(f"VALUE_{n} = {n}\n")                   # plain Python, no DAG: skipped
        elif kind < 70:
            path.write_text("")                                     # empty
        elif kind < 80 or (kind >= 98 and n not in LARGE):
            path.write_text(DAG.format(n=n))                        # a clean DAG
        elif kind < 85:
            path.write_text(f"from airflow import DAG\nDAG(dag_id='d_{n}', schedule=None)\n")
        elif kind < 90:
            # bytes that are no text (a NUL among them): CPython refuses, DG000
            path.write_bytes(bytes([0]) + bytes(rng.randrange(256) for _ in range(300)))
            kinds["binary"] += 1
        elif kind < 95:
            path.write_text(f"from airflow import DAG\nwith DAG(dag_id='broken_{n}' as d:\n    pass\n")
            kinds["syntax"] += 1
        elif kind < 98:
            path.write_text("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
            kinds["deep"] += 1
        else:
            # 1 MB: a long docstring ahead of a DAG, or a large table of constant data
            if n % 2:
                path.write_text('"""' + ("documentation line\n" * 55_000) + '"""\n' + DAG.format(n=n))
            else:
                path.write_text("ROWS = [\n" + "    (1, 'a', 2.5),\n" * 60_000 + "]\n" + DAG.format(n=n))
    return kinds


def _check(root: Path, jobs: int) -> tuple[int, list[dict], str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "dagguard", "check", ".", "--output-format", "json", "--jobs", str(jobs),
         "--now", "2026-11-30T00:00Z"],
        cwd=root, capture_output=True, text=True, env=env, timeout=900)
    return done.returncode, json.loads(done.stdout), done.stderr


def test_five_thousand_files_of_every_kind(tmp_path):
    expected = _corpus(tmp_path)
    code, findings, stderr = _check(tmp_path, jobs=2)
    assert "Traceback" not in stderr and "internal error" not in stderr
    assert code == 1
    assert {f["code"] for f in findings} == {"DG000"}
    assert len(findings) == sum(expected.values())
    assert len({f["path"] for f in findings}) == len(findings)      # one DG000 per bad file
    messages = [f["message"] for f in findings]
    assert sum("nested" in m for m in messages) == expected["deep"]
    one_job = _check(tmp_path, jobs=1)
    assert one_job[0] == code and one_job[1] == findings
