"""`import dagguard.idempotent` needs neither Airflow nor duckdb, psycopg or sqlglot."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

BLOCK = textwrap.dedent("""
    import sys
    BLOCKED = ("airflow", "duckdb", "psycopg", "psycopg2", "sqlglot", "pyarrow", "pandas", "deltalake")

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"No module named {name!r} (blocked by the test)", name=name)
            return None

    sys.meta_path.insert(0, Block())
""")


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK + textwrap.dedent(code)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


def test_import_and_write_interval_without_airflow_or_drivers():
    result = _run("""
        import sqlite3
        from datetime import datetime, timezone
        import dagguard.idempotent as idem
        from dagguard.idempotent import Interval, write_interval

        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE TABLE t (k INTEGER, ts TEXT)")
        utc = timezone.utc
        interval = Interval(datetime(2026, 1, 1, tzinfo=utc), datetime(2026, 1, 2, tzinfo=utc))
        rows = [{"k": 1, "ts": datetime(2026, 1, 1, 3, tzinfo=utc)}]
        write_interval(conn, "t", rows, interval, time_column="ts")
        write_interval(conn, "t", rows, interval, time_column="ts")
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (1,)
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
        assert not loaded, loaded
        print("OK")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "OK"


def test_decorator_and_operator_say_they_need_airflow():
    result = _run("""
        import dagguard.idempotent as idem
        for attempt in (lambda: idem.idempotent_write(conn_id="w", table="t", time_column="ts"),
                        lambda: idem.IntervalMergeOperator):
            try:
                attempt()
            except idem.AirflowRequiredError as exc:
                print(exc)
    """)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines == [
        "@idempotent_write needs apache-airflow>=3; install it with: pip install 'dagguard[airflow]'",
        "IntervalMergeOperator needs apache-airflow>=3; install it with: pip install 'dagguard[airflow]'"]


def test_a_delta_lake_without_deltalake_names_the_extra():
    result = _run("""
        from datetime import datetime, timezone
        from dagguard.idempotent import DeltaLake, Interval, UnsupportedConnectionError, write_interval

        utc = timezone.utc
        interval = Interval(datetime(2026, 1, 1, tzinfo=utc), datetime(2026, 1, 2, tzinfo=utc))
        for conn in ("delta:///tmp/lake", DeltaLake("/tmp/lake")):
            try:
                write_interval(conn, "t", [], interval, time_column="ts", columns=["ts"])
            except UnsupportedConnectionError as exc:
                print(exc)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Delta Lake tables need the deltalake package: pip install 'dagguard[delta]'"] * 2


def test_unsupported_connections_are_a_clear_error():
    import pytest

    from dagguard.idempotent import UnsupportedConnectionError, write_interval
    from tests.idempotent.helpers import DAY1

    with pytest.raises(UnsupportedConnectionError, match="supports sqlite3, duckdb and psycopg"):
        write_interval(object(), "t", [], DAY1, time_column="ts")
    with pytest.raises(UnsupportedConnectionError, match="unsupported database URL scheme 'mysql'"):
        write_interval("mysql://h/db", "t", [], DAY1, time_column="ts")
