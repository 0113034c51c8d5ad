"""Session fixtures: the incident scenario in real Airflow 3.3 metadata DBs, SQLite and PostgreSQL."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.doctor.support import PG_DATABASE, Incident, airflow_env, make_home, migrate_and_build


@pytest.fixture(scope="session")
def sqlite_incident(tmp_path_factory) -> Incident:
    home = make_home(tmp_path_factory.mktemp("airflow-sqlite"))
    conn = f"sqlite:///{home / 'airflow.db'}"
    facts = migrate_and_build(home, conn)
    return Incident("sqlite", conn, airflow_env(home, conn), facts)


@pytest.fixture(scope="session")
def postgres_incident(tmp_path_factory, postgres_server) -> Incident:
    dsn = postgres_server.create_database(PG_DATABASE)
    conn = dsn.replace("postgresql://", "postgresql+psycopg://", 1)
    home = make_home(tmp_path_factory.mktemp("airflow-postgres"))
    facts = migrate_and_build(home, conn)
    return Incident("postgres", conn, airflow_env(home, conn), facts)


@pytest.fixture(params=["sqlite", "postgres"])
def incident(request) -> Incident:
    """The scenario DB, once per backend. Read-only tests only: see incident_copy."""
    return request.getfixturevalue(f"{request.param}_incident")


@pytest.fixture
def incident_copy(request, incident, tmp_path) -> Incident:
    """A private copy of the scenario DB for tests that change it (the repair)."""
    if incident.backend == "sqlite":
        copy = tmp_path / "airflow.db"
        shutil.copy(incident.url.removeprefix("sqlite:///"), copy)
        conn = f"sqlite:///{copy}"
    else:
        name = f"doctor_copy_{abs(hash(request.node.nodeid)) % 10**8}"
        server = request.getfixturevalue("postgres_server")
        admin = server.sqlalchemy_url.replace("postgresql+psycopg://", "postgresql://", 1)
        import psycopg

        with psycopg.connect(admin, autocommit=True) as pg:
            pg.execute(f'DROP DATABASE IF EXISTS "{name}"')
            pg.execute(f'CREATE DATABASE "{name}" TEMPLATE "{PG_DATABASE}"')
        request.addfinalizer(lambda: server.drop_database(name))
        conn = incident.url.rsplit("/", 1)[0] + f"/{name}"
    home = Path(incident.airflow_env["AIRFLOW_HOME"])
    return Incident(incident.backend, conn, airflow_env(home, conn), incident.facts)
