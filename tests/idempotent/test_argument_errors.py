"""Every error of dagguard.idempotent is an IdempotentWriteError, argument mistakes included
(which stay ValueError / TypeError), and text a driver cannot encode is a clear error too."""

from __future__ import annotations

import json
from datetime import date, datetime

import pytest

from dagguard.idempotent import (ArgumentTypeError, IdempotentWriteError, Interval, InvalidArgumentError,
                                 UnsupportedConnectionError, write_interval)
from tests.idempotent.helpers import DAY1, at, events, sqlite_database

ROWS = events((1, at(1, 1), "a"))


def _call(**overrides):
    arguments = {"conn": "sqlite:///:memory:", "table": "events", "rows": ROWS, "interval": DAY1,
                 "time_column": "ts"}
    arguments.update(overrides)
    return write_interval(arguments.pop("conn"), arguments.pop("table"), arguments.pop("rows"),
                          arguments.pop("interval"), **arguments)


@pytest.mark.parametrize("overrides, builtin, message", [
    ({"strategy": "merg"}, ValueError, r"unknown strategy 'merg'; use one of replace, merge"),
    ({"strategy": "merge"}, ValueError, r"strategy='merge' needs unique_key=\[...\]"),
    ({"time_column": None}, ValueError, r"strategy='replace' needs time_column="),
    ({"delete_missing": True}, ValueError, r"delete_missing=True only applies to strategy='merge'"),
    ({"strategy": "merge", "unique_key": 5}, TypeError, r"unique_key must be a column name or a list"),
    ({"interval": (at(1), at(2))}, TypeError, r"interval must be a dagguard.idempotent.Interval\(start, end\), "
                                              r"not a tuple"),
])
def test_argument_mistakes_are_idempotent_write_errors(overrides, builtin, message):
    with pytest.raises(IdempotentWriteError, match=message) as caught:
        _call(**overrides)
    assert isinstance(caught.value, builtin)


@pytest.mark.parametrize("start, end, builtin, message", [
    (datetime(2026, 1, 1), at(2), ValueError, r"interval start 2026-01-01T00:00:00 is not timezone-aware"),
    (at(2), at(1), ValueError, r"interval end 2026-01-01T00:00:00\+00:00 is before its start"),
    (date(2026, 1, 1), at(2), TypeError, r"interval start must be a datetime, got date"),
    (at(1), "2026-01-02", TypeError, r"interval end must be a datetime, got str"),
])
def test_bad_interval_bounds_are_idempotent_write_errors(start, end, builtin, message):
    with pytest.raises(IdempotentWriteError, match=message) as caught:
        Interval(start, end)
    assert isinstance(caught.value, builtin)
    assert isinstance(caught.value, InvalidArgumentError if builtin is ValueError else ArgumentTypeError)


def test_a_string_that_is_neither_a_url_nor_a_connection_id_is_named(monkeypatch):
    pytest.importorskip("airflow.sdk")
    monkeypatch.delenv("AIRFLOW_CONN_WAREHOUS", raising=False)
    with pytest.raises(UnsupportedConnectionError,
                       match=r"'warehous' is neither a database URL .* nor a defined Airflow connection id"):
        _call(conn="warehous")


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_a_lone_surrogate_is_a_clear_error_and_writes_nothing(db, strategy):
    db.create()
    conn = db.connect()
    try:
        write_interval(conn, "events", ROWS, DAY1, time_column="ts")
        with pytest.raises(IdempotentWriteError, match=r"nothing was written.*\\ud800"):
            write_interval(conn, "events", events((1, at(1, 2), "b\ud800c"), (2, at(1, 3), "d")), DAY1,
                           time_column="ts", strategy=strategy, unique_key=["k"] if strategy == "merge" else None)
    finally:
        conn.close()
    assert db.rows() == [(1, at(1, 1), "a")]


def test_the_row_and_column_of_a_lone_surrogate_are_named(tmp_path):
    db = sqlite_database(tmp_path)
    db.create()
    with pytest.raises(IdempotentWriteError, match=r"row 1 of the batch .*column 'v' holds 'b\\ud800c', which "
                                                   r"utf-8 cannot encode \(surrogates not allowed\)"):
        write_interval(db.url, "events", events((1, at(1, 2), "a"), (2, at(1, 3), "b\ud800c")), DAY1,
                       time_column="ts")


def test_a_connection_whose_provider_is_not_installed_names_what_to_install(monkeypatch):
    """Airflow's own `Unknown hook type "mysql"` traceback came out of connect_airflow."""
    pytest.importorskip("airflow.sdk")
    monkeypatch.setenv("AIRFLOW_CONN_LEGACY_DB", json.dumps({"conn_type": "mysql", "host": "db.example"}))
    with pytest.raises(UnsupportedConnectionError,
                       match=r"'legacy_db' has type 'mysql', whose hook comes from a provider package that is "
                             r"not installed: install the Airflow provider package for connection type 'mysql'"):
        _call(conn="legacy_db")


def test_the_extras_providers_are_named_with_the_extra(monkeypatch):
    pytest.importorskip("airflow.sdk")
    from airflow.sdk.exceptions import AirflowException

    from dagguard.idempotent.connections import _hook_of

    class WithoutProvider:
        conn_type = "sqlite"

        def get_hook(self):
            raise AirflowException('Unknown hook type "sqlite"')

    with pytest.raises(UnsupportedConnectionError,
                       match=r"pip install 'dagguard\[airflow\]' \(it brings apache-airflow-providers-sqlite\)"):
        _hook_of(WithoutProvider(), "warehouse")
