"""Where doctor finds the metadata DB: --db, the environment, airflow.cfg, airflow.db."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from dagguard.doctor.connect import discover_target, normalize_url, redact
from dagguard.doctor.errors import ConnectError

ENV = "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"


def write_cfg(home: Path, conn: str) -> None:
    home.mkdir(exist_ok=True)
    (home / "airflow.cfg").write_text(f"[core]\ndags_folder = x\n\n[database]\nsql_alchemy_conn = {conn}\n")


def test_explicit_url_wins(tmp_path: Path):
    write_cfg(tmp_path, "sqlite:////cfg.db")
    target = discover_target("sqlite:////explicit.db", {ENV: "sqlite:////env.db", "AIRFLOW_HOME": str(tmp_path)})
    assert (target.url, target.source) == ("sqlite:////explicit.db", "--db")


def test_environment_before_cfg(tmp_path: Path):
    write_cfg(tmp_path, "sqlite:////cfg.db")
    target = discover_target(None, {ENV: "sqlite:////env.db", "AIRFLOW_HOME": str(tmp_path)})
    assert (target.url, target.source) == ("sqlite:////env.db", ENV)


def test_cfg_with_percent_and_template(tmp_path: Path):
    write_cfg(tmp_path, "postgresql+psycopg://u:p%40ss@db/airflow")
    assert discover_target(None, {"AIRFLOW_HOME": str(tmp_path)}).url == "postgresql+psycopg://u:p%40ss@db/airflow"
    write_cfg(tmp_path, "sqlite:///{AIRFLOW_HOME}/airflow.db")
    assert discover_target(None, {"AIRFLOW_HOME": str(tmp_path)}).url == f"sqlite:///{tmp_path}/airflow.db"


def test_default_sqlite_file(tmp_path: Path):
    (tmp_path / "airflow.db").write_bytes(b"")
    target = discover_target(None, {"AIRFLOW_HOME": str(tmp_path)})
    assert target.url == f"sqlite:///{tmp_path / 'airflow.db'}"


def test_nothing_found(tmp_path: Path):
    with pytest.raises(ConnectError, match="no Airflow metadata database found"):
        discover_target(None, {"AIRFLOW_HOME": str(tmp_path)})


def test_redact_hides_password():
    assert redact("postgresql+psycopg://airflow:secret@db:5432/airflow") == \
        "postgresql+psycopg://airflow:***@db:5432/airflow"


@pytest.mark.parametrize("url, installed, expected", [
    ("postgres://u@db/airflow", {"psycopg2", "psycopg"}, "postgresql://u@db/airflow"),
    ("postgresql://u@db/airflow", {"psycopg"}, "postgresql+psycopg://u@db/airflow"),
    ("postgresql+psycopg2://u@db/airflow", {"psycopg"}, "postgresql+psycopg://u@db/airflow"),
    ("postgresql+psycopg2://u@db/airflow", {"psycopg2", "psycopg"}, "postgresql+psycopg2://u@db/airflow"),
    ("sqlite:////srv/airflow.db", set(), "sqlite:////srv/airflow.db"),
], ids=["postgres-scheme", "default-driver-missing", "psycopg2-missing", "psycopg2-present", "sqlite"])
def test_airflow_style_urls_are_normalized(url: str, installed: set[str], expected: str):
    normalized = normalize_url(make_url(url), module_available=installed.__contains__)
    assert normalized.render_as_string(hide_password=False) == expected
