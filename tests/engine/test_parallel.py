"""Checking in a process pool gives exactly what checking in one process gives."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagguard.api import check_paths
from dagguard.config import Settings
from dagguard.engine import parallel
from dagguard.rules import ALL_RULES
from dagguard.rules.pages import examples, page_text
from tests.lint_helpers import NOW

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The example DAGs and every rule page's examples, one file each, in one folder."""
    shutil.copytree(REPO / "example_dags", tmp_path / "example_dags")
    pages = tmp_path / "pages"
    pages.mkdir()
    for rule in ALL_RULES:
        for example in examples(page_text(rule.code) or ""):
            (pages / f"{rule.code}_{example.kind}_{example.number}.py").write_text(example.code, encoding="utf-8")
    return tmp_path


@pytest.fixture
def pool_sizes(monkeypatch) -> list[int]:
    """The size of every process pool started; a pool for even a handful of files."""
    started: list[int] = []
    real = parallel.ProcessPoolExecutor

    def recording(max_workers: int, **kwargs):
        started.append(max_workers)
        return real(max_workers=max_workers, **kwargs)

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", recording)
    monkeypatch.setattr(parallel, "MIN_FILES_PER_JOB", 1)
    return started


def test_two_jobs_find_what_one_job_finds(corpus: Path, pool_sizes: list[int]) -> None:
    one = check_paths([corpus], settings=Settings(), now=NOW, jobs=1)
    assert pool_sizes == []
    two = check_paths([corpus], settings=Settings(), now=NOW, jobs=2)
    assert pool_sizes == [2]
    assert one.files_checked > 50 and len(one.findings) > 50
    assert "DG302" in {f.code for f in one.findings}  # the cross-file rule ran on workers' facts
    assert two == one


def test_few_files_stay_in_process(corpus: Path, monkeypatch) -> None:
    started: list[int] = []
    monkeypatch.setattr(parallel, "ProcessPoolExecutor", lambda **kw: started.append(1))
    check_paths([corpus / "example_dags"], settings=Settings(), now=NOW, jobs=2)
    assert started == []


@pytest.mark.parametrize(("requested", "files", "expected"), [
    (None, 0, 1), (1, 10_000, 1), (2, 10_000, 2), (8, 2 * parallel.MIN_FILES_PER_JOB, 2),
    (2, parallel.MIN_FILES_PER_JOB - 1, 1),
])
def test_jobs_shrink_to_what_the_files_pay_for(requested, files, expected) -> None:
    assert parallel.effective_jobs(requested, files) == expected


@pytest.mark.parametrize("value", ["0", "-3"])
def test_jobs_below_one_is_a_usage_error(tmp_path: Path, value: str) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "dagguard", "check", "--jobs", value, str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 2
    assert done.stderr.strip() == f"dagguard: error: --jobs must be at least 1, got {value}"


def _dies_in_a_worker(item: int, parent_pid: int) -> int:
    """Kills the worker process that runs it (as the OOM killer would); works in the parent."""
    import os

    if os.getpid() != parent_pid:
        os._exit(1)
    return item * 2


def test_a_killed_worker_does_not_lose_files(monkeypatch) -> None:
    import os

    monkeypatch.setattr(parallel, "MIN_FILES_PER_JOB", 1)
    items = list(range(12))
    assert list(parallel.map_in_order(_dies_in_a_worker, items, os.getpid(), jobs=2)) == [i * 2 for i in items]
