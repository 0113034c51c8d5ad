"""Only regular files are read; what cannot be looked into is reported, and the rest is checked."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from dagguard.api import check_paths
from dagguard.config import Settings
from tests.lint_helpers import NOW

GOOD_DAG = b"from airflow.sdk import DAG\nwith DAG('ok'):\n    pass\n"
GOOD_CODES = {"DG105"}


def check_bounded(paths, seconds=60):
    """check_paths on a thread, so that a hang fails the test instead of stalling the run."""
    outcome: dict = {}
    worker = threading.Thread(target=lambda: outcome.update(result=check_paths(paths, settings=Settings(), now=NOW)),
                              daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the check hung"
    return outcome["result"]


def by_name(result) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for finding in result.findings:
        found.setdefault(Path(finding.path).name, []).append(finding.code)
    return found


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_a_folder_is_skipped_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "x.py")
    (tmp_path / "good.py").write_bytes(GOOD_DAG)
    result = check_bounded([tmp_path])
    assert by_name(result) == {"good.py": sorted(GOOD_CODES)} or set(by_name(result)) == {"good.py"}
    assert result.files_checked == 1


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_link_to_dev_zero_in_a_folder_is_not_read(tmp_path):
    (tmp_path / "x.py").symlink_to("/dev/zero")
    (tmp_path / "good.py").write_bytes(GOOD_DAG)
    result = check_bounded([tmp_path])
    assert set(by_name(result)) == {"good.py"} and result.files_checked == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="no special files")
def test_special_files_named_explicitly_are_reported_as_skipped(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "good.py").write_bytes(GOOD_DAG)
    result = check_bounded([tmp_path / "pipe.py", tmp_path / "zero.py", tmp_path / "good.py"])
    found = {Path(f.path).name: f for f in result.findings if f.code == "DG000"}
    assert set(found) == {"pipe.py", "zero.py"}
    assert "named pipe" in found["pipe.py"].message and "character device" in found["zero.py"].message
    assert GOOD_CODES <= set(by_name(result)["good.py"])


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from dagguard.engine import files, runner

    monkeypatch.setattr(runner, "MAX_FILE_BYTES", 1000)
    reads: list[int] = []
    real_fdopen = os.fdopen

    class CountingFile:
        def __init__(self, file):
            self.file = file

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def fileno(self):
            return self.file.fileno()

        def read(self, size=-1):
            reads.append(size)
            return self.file.read(size)

    monkeypatch.setattr(files.os, "fdopen", lambda fd, mode: CountingFile(real_fdopen(fd, mode)))
    (tmp_path / "huge.py").write_bytes(b"x = 1\n" * 1000)
    finding, = check_bounded([tmp_path]).findings
    assert finding.code == "DG000" and "too large" in finding.message and reads == []


def test_a_broken_symlink_is_reported_under_its_own_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("dags").mkdir()
    Path("dags/link.py").symlink_to(tmp_path / "missing_target.py")
    Path("dags/good.py").write_bytes(GOOD_DAG)
    result = check_bounded([Path("dags")])
    broken = [f for f in result.findings if f.code == "DG000"]
    assert [f.path for f in broken] == [os.path.join("dags", "link.py")]
    assert "No such file" in broken[0].message
    assert GOOD_CODES <= set(by_name(result)["good.py"])


def test_a_symlinked_file_is_shown_by_the_name_it_was_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("real.txt").write_bytes(GOOD_DAG)
    Path("dag.py").symlink_to("real.txt")
    result = check_bounded([Path("dag.py")])
    assert {f.path for f in result.findings} == {"dag.py"}


def _unprivileged_ids() -> tuple[int, int] | None:
    """A non-root (uid, gid) to drop to; None when this process is not root (root ignores chmod)."""
    if os.geteuid() != 0:
        return None
    for name in ("nobody", "daemon"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return entry.pw_uid, entry.pw_gid
    pytest.skip("running as root and no unprivileged user to run as")


def _check_as(ids: tuple[int, int] | None, folder: Path) -> list[list[str]]:
    """Check `folder` in a forked child that has dropped root: the interpreter lives in root's
    home, so an unprivileged process could not start it, but a fork already has it loaded."""
    from dagguard.engine import deep_stack

    check_paths([folder], settings=Settings(), now=NOW)  # load every module while still root
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            os.close(read_end)
            if ids is not None:
                os.setgroups([])
                os.setgid(ids[1])
                os.setuid(ids[0])
            deep_stack._executor = None  # the parent's worker thread does not exist here
            result = check_paths([folder], settings=Settings(), now=NOW)
            os.write(write_end, json.dumps([[f.path, f.code, f.message] for f in result.findings]).encode())
        except BaseException as exc:
            os.write(write_end, json.dumps({"error": repr(exc)}).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        output = pipe.read()
    os.waitpid(child, 0)
    answer = json.loads(output)
    assert not isinstance(answer, dict), answer
    return answer


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_an_unreadable_folder_is_reported_and_the_readable_files_are_checked():
    ids = _unprivileged_ids()
    base = Path(tempfile.mkdtemp())  # not under pytest's root-only tmp folder
    try:
        base.chmod(0o755)
        dags = base / "dags"
        (dags / "secret").mkdir(parents=True)
        (dags / "secret" / "hidden.py").write_bytes(GOOD_DAG)
        (dags / "good.py").write_bytes(GOOD_DAG)
        (dags / "secret").chmod(0)
        findings = _check_as(ids, dags)
    finally:
        (base / "dags" / "secret").chmod(0o755)
        shutil.rmtree(base)
    problems = [(path, message) for path, code, message in findings if code == "DG000"]
    assert [Path(path).name for path, _ in problems] == ["secret"]
    assert "cannot read the folder" in problems[0][1] and "Permission denied" in problems[0][1]
    assert GOOD_CODES <= {code for path, code, _ in findings if path.endswith("good.py")}
