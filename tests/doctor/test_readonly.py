"""Doctor reads without writing, and without Airflow."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.exc import DBAPIError

from dagguard.doctor.connect import DatabaseTarget
from dagguard.doctor.diagnose import open_database
from tests.doctor.support import FLOOD_THRESHOLD, DoctorRun, Incident, run_doctor, without_ages
from tests.doctor.test_bad_input import assert_clean_error


def test_diagnosis_transaction_refuses_writes(incident: Incident, monkeypatch):
    # In this process, keep Airflow out of sys.modules: other tests check what their imports load.
    monkeypatch.setenv("DAGGUARD_DOCTOR_DECLARED_TABLES", "1")
    with open_database(DatabaseTarget(incident.url, "test")) as database:
        with pytest.raises(DBAPIError, match="(?i)read.?only"):
            database.conn.execute(update(database.tables.backfill).values(is_paused=False))


def test_sqlite_file_is_unchanged_by_diagnosis_and_dry_run(sqlite_incident: Incident):
    path = Path(sqlite_incident.url.removeprefix("sqlite:///"))
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert run_doctor("--db", sqlite_incident.url, "--since", "2026-01-01").code == 1
    assert run_doctor("--db", sqlite_incident.url, "--repair", "stuck-backfill-runs").code == 1
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_runs_without_airflow_installed(incident: Incident):
    # Hide Airflow from the import system: doctor needs only SQLAlchemy and the schema.
    code = (
        "import sys; sys.modules['airflow'] = None\n"
        "from dagguard.doctor import build_options, diagnose\n"
        f"diagnosis = diagnose({incident.url!r}, build_options(max_queued={FLOOD_THRESHOLD}))\n"
        "print(sorted(f.code for f in diagnosis.findings))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "['DG901', 'DG902', 'DG903', 'DG904']", result.stderr


def test_tables_come_from_airflow_models_when_installed(incident: Incident):
    code = (
        "from dagguard.doctor.connect import DatabaseTarget\n"
        "from dagguard.doctor.diagnose import open_database\n"
        f"with open_database(DatabaseTarget({incident.url!r}, 'test')) as database:\n"
        "    tables = database.tables\n"
        "    print(tables.from_airflow, type(tables.dag_run.c.queued_at.type).__name__)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "True UtcDateTime", result.stderr


def test_declared_tables_give_the_same_report_as_airflow_models(incident: Incident):
    args = ("--db", incident.url, "--format", "json", "--max-queued", str(FLOOD_THRESHOLD))
    with_models = run_doctor(*args).json()
    declared = run_doctor(*args, env={"DAGGUARD_DOCTOR_DECLARED_TABLES": "1"}).json()
    assert without_ages(with_models["findings"]) == without_ages(declared["findings"])
    assert len(with_models["findings"]) == 4


# --- a WAL-mode SQLite database in a folder doctor cannot write ------------------------------
# Tests run as root, and root ignores file permissions; so the folder is made read-only for the
# doctor process either by its mode for a process without root's permission-overriding
# capabilities (as any other user: the interpreter lives under /root, so another user cannot
# run it), or by a read-only bind mount in a private mount namespace.
READ_ONLY_WAYS = ["folder-mode", "read-only-mount"]


def read_only_command(folder: Path, way: str) -> list[str]:
    """A command prefix that runs a program for which `folder` cannot be written."""
    if way == "folder-mode":
        folder.chmod(0o555)
        if os.geteuid() != 0:
            return []
        if not shutil.which("setpriv"):
            pytest.skip("setpriv is needed to drop root's CAP_DAC_OVERRIDE")
        return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("a read-only bind mount needs root and unshare")
    remount = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    return ["unshare", "-m", "sh", "-c", remount, "sh", str(folder)]


@pytest.fixture
def read_only_folder(tmp_path: Path):
    folder = tmp_path / "readonly"
    folder.mkdir()
    yield folder
    folder.chmod(0o755)


def run_doctor_read_only(folder: Path, way: str, *args: str) -> DoctorRun:
    prefix = read_only_command(folder, way)
    probe = subprocess.run([*prefix, sys.executable, "-c", f"open({str(folder / 'probe')!r}, 'w')"],
                           capture_output=True, text=True, timeout=60)
    if "Operation not permitted" in probe.stderr and "setpriv" in probe.stderr + " ".join(prefix):
        pytest.skip(f"cannot drop capabilities here: {probe.stderr.strip()}")
    assert probe.returncode != 0, "the folder is writable for the subprocess: the test would prove nothing"
    env = {key: value for key, value in os.environ.items() if not key.startswith("AIRFLOW")}
    result = subprocess.run([*prefix, sys.executable, "-m", "dagguard", "doctor", *args], env=env,
                            capture_output=True, text=True, timeout=120)
    return DoctorRun(result.returncode, result.stdout, result.stderr)


def wal_copy(source: Path, target: Path) -> Path:
    """A consistent copy of the scenario DB, in WAL mode with no -wal or -shm file beside it."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    src.backup(dst)
    src.close()
    dst.close()
    assert target.read_bytes()[18:20] == b"\x02\x02"  # the header says WAL
    assert not Path(f"{target}-wal").exists() and not Path(f"{target}-shm").exists()
    return target


UNPAUSE_STUCK_BACKFILL = "UPDATE backfill SET is_paused = 0 WHERE completed_at IS NOT NULL"


@pytest.mark.parametrize("way", READ_ONLY_WAYS)
def test_wal_database_in_a_read_only_folder_is_read_without_writing(
        sqlite_incident: Incident, read_only_folder: Path, way: str):
    db = wal_copy(Path(sqlite_incident.url.removeprefix("sqlite:///")), read_only_folder / "airflow.db")
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    result = run_doctor_read_only(read_only_folder, way, "--db", f"sqlite:///{db}", "--format", "json",
                                  "--max-queued", str(FLOOD_THRESHOLD))
    assert result.code == 1 and not result.stderr, result.stderr
    assert sorted(f["code"] for f in result.json()["findings"]) == ["DG901", "DG902", "DG903", "DG904"]
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in read_only_folder.iterdir()) == ["airflow.db"]


@pytest.mark.parametrize("way", READ_ONLY_WAYS)
def test_a_live_writers_changes_are_read_in_a_read_only_folder(
        sqlite_incident: Incident, read_only_folder: Path, way: str):
    # Its -wal and -shm exist: doctor reads through them (immutable=1 would miss the change).
    db = wal_copy(Path(sqlite_incident.url.removeprefix("sqlite:///")), read_only_folder / "airflow.db")
    writer = sqlite3.connect(db)
    try:
        writer.execute(UNPAUSE_STUCK_BACKFILL)
        writer.commit()
        assert Path(f"{db}-wal").stat().st_size > 0
        result = run_doctor_read_only(read_only_folder, way, "--db", f"sqlite:///{db}", "--format", "json",
                                      "--max-queued", str(FLOOD_THRESHOLD))
    finally:
        writer.close()
    assert result.code == 1 and not result.stderr, result.stderr
    assert "DG901" not in {f["code"] for f in result.json()["findings"]}


@pytest.mark.parametrize("way", READ_ONLY_WAYS)
def test_pending_wal_changes_in_a_read_only_folder_are_a_clear_error(
        sqlite_incident: Incident, read_only_folder: Path, tmp_path: Path, way: str):
    # A -wal file with changes but no -shm (copied, or left by a crash): reading it needs a -shm
    # file that cannot be created, and the database file alone would be stale.
    live = wal_copy(Path(sqlite_incident.url.removeprefix("sqlite:///")), tmp_path / "airflow.db")
    writer = sqlite3.connect(live)
    try:
        writer.execute(UNPAUSE_STUCK_BACKFILL)
        writer.commit()
        for suffix in ("", "-wal"):
            shutil.copy(f"{live}{suffix}", read_only_folder / f"airflow.db{suffix}")
    finally:
        writer.close()
    result = run_doctor_read_only(read_only_folder, way, "--db", f"sqlite:///{read_only_folder / 'airflow.db'}")
    assert_clean_error(result, "in WAL mode", "airflow.db-wal holds changes", "copy airflow.db and airflow.db-wal")
