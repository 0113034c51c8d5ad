"""Bad input ends with exit 2 and one clear line on stderr, never a traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.doctor.support import AIRFLOW, Incident, airflow_env, run_airflow, run_doctor


def assert_clean_error(result, *fragments: str) -> None:
    assert result.code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("dagguard: error: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_unreachable_postgres():
    result = run_doctor("--db", "postgresql+psycopg://postgres@127.0.0.1:1/airflow")
    assert_clean_error(result, "cannot connect to postgresql+psycopg://postgres@127.0.0.1:1/airflow")


def test_password_is_not_printed():
    result = run_doctor("--db", "postgresql+psycopg://airflow:s3cret@127.0.0.1:1/airflow")
    assert_clean_error(result, "cannot connect")
    assert "s3cret" not in result.stderr


def test_missing_sqlite_file_is_not_created(tmp_path: Path):
    missing = tmp_path / "nope.db"
    assert_clean_error(run_doctor("--db", f"sqlite:///{missing}"), "does not exist")
    assert not missing.exists()


def test_sqlite_db_that_is_not_airflow(tmp_path: Path):
    other = tmp_path / "shop.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY)")
    assert_clean_error(run_doctor("--db", f"sqlite:///{other}"),
                       "not an Airflow metadata database", "alembic_version")


def test_file_that_is_not_a_database(tmp_path: Path):
    text = tmp_path / "notes.db"
    text.write_text("hello, this is not SQLite\n" * 100)
    assert_clean_error(run_doctor("--db", f"sqlite:///{text}"), "not a database")


def test_postgres_db_that_is_not_airflow(postgres_server):
    dsn = postgres_server.create_database("not_airflow")
    url = dsn.replace("postgresql://", "postgresql+psycopg://", 1)
    assert_clean_error(run_doctor("--db", url), "not an Airflow metadata database")


def test_unsupported_backend():
    assert_clean_error(run_doctor("--db", "mysql+pymysql://u@127.0.0.1/airflow"),
                       "unsupported database backend 'mysql'")


def test_garbage_url():
    assert_clean_error(run_doctor("--db", "not a url"), "not a database URL")


def test_nothing_to_discover(tmp_path: Path):
    assert_clean_error(run_doctor(env={"AIRFLOW_HOME": str(tmp_path)}),
                       "no Airflow metadata database found", str(tmp_path))


@pytest.mark.parametrize("args, fragment", [
    (["--since", "yesterday"], "--since 'yesterday' is not an ISO 8601 time"),
    (["--format", "xml"], "--format must be one of text, json, csv"),
    (["--yes"], "--yes applies a repair"),
    (["--check", "everything"], "unknown check 'everything'"),
    (["--repair", "everything"], "unknown repair 'everything'"),
    (["--repair", "stuck-backfill-runs", "--format", "csv"], "not csv"),
], ids=["since", "format", "yes-alone", "check", "repair", "repair-csv"])
def test_bad_options(sqlite_incident: Incident, args: list[str], fragment: str):
    assert_clean_error(run_doctor("--db", sqlite_incident.url, *args), fragment)


@pytest.fixture(scope="module")
def partial_3_0_schema(sqlite_incident: Incident, tmp_path_factory) -> Path:
    """A real older schema: the incident DB downgraded by Airflow to the first 3.0.0 migration.

    Airflow cannot downgrade below 3.0 without the FAB provider, which is not installed; this
    revision's tables are Airflow 2.10.3's plus one dropped FAB foreign key.
    """
    copy = tmp_path_factory.mktemp("older") / "airflow.db"
    copy.write_bytes(Path(sqlite_incident.url.removeprefix("sqlite:///")).read_bytes())
    env = airflow_env(Path(sqlite_incident.airflow_env["AIRFLOW_HOME"]), f"sqlite:///{copy}")
    run_airflow([str(AIRFLOW), "db", "downgrade", "-r", "044f740568ec", "-y"], env)
    return copy


def test_partly_migrated_schema(partial_3_0_schema: Path):
    assert_clean_error(run_doctor("--db", f"sqlite:///{partial_3_0_schema}"),
                       "'044f740568ec' is part-way through the Airflow 3.0.0 migration")


def stamped_copy(source: Path, target: Path, revision: str) -> Path:
    target.write_bytes(source.read_bytes())
    with sqlite3.connect(target) as db:
        db.execute("UPDATE alembic_version SET version_num = ?", (revision,))
    return target


def test_airflow_2_schema(partial_3_0_schema: Path, tmp_path: Path):
    # The 2.10.3 head revision on (nearly) its schema, see partial_3_0_schema.
    old = stamped_copy(partial_3_0_schema, tmp_path / "a2.db", "5f2621c13b39")
    assert_clean_error(run_doctor("--db", f"sqlite:///{old}"),
                       "Airflow 2.10.3, older than Airflow 3.0", "supports Airflow 3.0 to 3.3")


def test_unknown_revision(sqlite_incident: Incident, tmp_path: Path):
    newer = stamped_copy(Path(sqlite_incident.url.removeprefix("sqlite:///")), tmp_path / "new.db",
                         "0123456789ab")
    assert_clean_error(run_doctor("--db", f"sqlite:///{newer}"), "unknown alembic revision '0123456789ab'")


@pytest.mark.parametrize("url", [
    "postgresql://u@127.0.0.1:abc/db",
    "postgresql://[::1",
    "postgresql://u:s3cret@127.0.0.1:abc/db",
], ids=["port-not-a-number", "unclosed-ipv6", "bad-port-with-password"])
def test_url_sqlalchemy_cannot_parse(url: str):
    result = run_doctor("--db", url)
    assert_clean_error(result, "not a database URL (from --db)")
    assert "s3cret" not in result.stderr


@pytest.mark.parametrize("args, fragment", [
    (["--since", "9999-12-31T23:59:59-12:00"], "out of range"),
    (["--since", "0001-01-01T00:00:00+14:00"], "out of range"),
    (["--queued-age", "2000000000"], "--queued-age must be 0 to"),
    (["--queued-age", "100000000000000000000"], "--queued-age must be 0 to"),
], ids=["since-after-9999-utc", "since-before-year-1-utc", "queued-age-past-year-1", "queued-age-huge"])
def test_option_values_out_of_range(incident: Incident, args: list[str], fragment: str):
    assert_clean_error(run_doctor("--db", incident.url, *args), fragment)


@pytest.mark.parametrize("args", [
    ["--since", "0001-01-01T00:00:00Z"],
    ["--since", "9999-12-31T23:59:59.999999Z"],
    ["--queued-age", "52560000"],
], ids=["since-year-1", "since-year-9999", "queued-age-largest"])
def test_option_values_at_the_limits_are_diagnosed(incident: Incident, args: list[str]):
    result = run_doctor("--db", incident.url, "--format", "json", *args)
    assert result.code == 1 and not result.stderr, result.stderr
    assert result.json()["findings"]
