"""doctor on a PostgreSQL metadata database in another encoding than UTF8."""

from __future__ import annotations

import subprocess

import pytest

from tests.doctor.support import FLOOD_THRESHOLD, PG_DATABASE, Incident, run_doctor, without_ages


@pytest.mark.parametrize("encoding", ["SQL_ASCII", "LATIN1"])
def test_doctor_reports_the_same_in_a_database_of_another_encoding(postgres_incident: Incident,
                                                                    postgres_server, encoding):
    """psycopg hands a SQL_ASCII client every text value as bytes, state and run_id included."""
    name = f"doctor_{encoding.lower()}"
    postgres_server.drop_database(name)
    dsn = postgres_server.create_database(name, encoding=encoding)
    try:
        source = postgres_server.dsn.rsplit("/", 1)[0] + f"/{PG_DATABASE}"
        dump = subprocess.run([str(postgres_server.bindir / "pg_dump"), "--no-owner", source],
                              capture_output=True, text=True, check=True).stdout
        subprocess.run([str(postgres_server.bindir / "psql"), "-q", "-v", "ON_ERROR_STOP=1", dsn],
                       input=dump, capture_output=True, text=True, check=True)
        url = dsn.replace("postgresql://", "postgresql+psycopg://", 1)
        args = ("--format", "json", "--max-queued", str(FLOOD_THRESHOLD))
        expected = run_doctor("--db", postgres_incident.url, *args)
        result = run_doctor("--db", url, *args)
        assert result.stderr == expected.stderr, result.stderr[-3000:]
        assert result.code == expected.code
        assert without_ages(result.json()["findings"]) == without_ages(expected.json()["findings"])
    finally:
        postgres_server.drop_database(name)
