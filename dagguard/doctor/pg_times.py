"""PostgreSQL timestamps that no Python datetime can be, read as their text.

A PostgreSQL timestamp column also holds 'infinity' and '-infinity', and years before 1 and
after 9999, which psycopg refuses to load ("timestamp too large"): one such value in one row
made every doctor query that selected it fail, and the whole report with it. Loaded as text,
the value reaches times.read_time like SQLite's odd text does, and is reported for its row
(times.comparable keeps the infinities out of the checks' comparisons).
"""

from __future__ import annotations

from typing import Any


def load_unrepresentable_as_text(dbapi_connection: Any, _record: Any) -> None:
    """SQLAlchemy `connect` listener: on this psycopg connection, timestamps (with and without
    zone) that a datetime cannot hold load as the server's text instead of raising."""
    from psycopg import DataError
    from psycopg.types.datetime import TimestampLoader, TimestamptzLoader

    for name, base in (("timestamptz", TimestamptzLoader), ("timestamp", TimestampLoader)):

        class TextFallback(base):  # type: ignore[misc, valid-type]
            def load(self, data: Any) -> Any:
                try:
                    return super().load(data)
                except DataError:
                    return bytes(data).decode("utf-8", "replace")

        # SQLAlchemy's psycopg dialect fetches text, not binary: these are the loaders it uses.
        dbapi_connection.adapters.register_loader(name, TextFallback)
