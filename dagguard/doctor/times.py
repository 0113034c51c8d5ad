"""Stored timestamps, read without trusting them: SQLite keeps whatever a column was given.

PostgreSQL's timestamptz holds only timestamps, and 'infinity' and '-infinity' (which
pg_times loads as their text). A SQLite column declared TIMESTAMP holds any
text or number, and Airflow writes UTC text `YYYY-MM-DD HH:MM:SS[.ffffff]`, which orders as
time when compared as text. So doctor selects stored times as they are and parses them itself
(a value it cannot read is reported for its row, not raised), and on SQLite compares in SQL
only the values that have Airflow's form.
"""

from __future__ import annotations

import datetime
from typing import Any

from sqlalchemy import ColumnElement, String, and_, func, or_, true, type_coerce
from sqlalchemy.types import NullType

UTC = datetime.timezone.utc
_DIGITS_19 = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]"


class UnreadableTimeError(ValueError):
    """A stored value that is not a timestamp."""


def read_time(value: Any) -> datetime.datetime | None:
    """A stored timestamp as an aware UTC datetime (naive values are UTC, as Airflow stores them)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.datetime.fromisoformat(value)
        except ValueError:
            raise UnreadableTimeError(value) from None
    if not isinstance(value, datetime.datetime):
        raise UnreadableTimeError(value)
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:
        raise UnreadableTimeError(value) from None


def stored_value(column: ColumnElement, name: str | None = None) -> ColumnElement:
    """Select a time column as the driver returns it, without SQLAlchemy's (raising) parsing."""
    return type_coerce(column, NullType()).label(name or column.name)


def comparable(column: ColumnElement, dialect_name: str) -> ColumnElement[bool]:
    """True where SQL compares the stored value as a time: on PostgreSQL every finite value
    ('infinity' and '-infinity' are before or after any time, and no time a run had), on
    SQLite only text of Airflow's form `YYYY-MM-DD HH:MM:SS[.ffffff]`, which orders as time."""
    if dialect_name == "postgresql":
        return func.isfinite(column)
    if dialect_name != "sqlite":
        return true()
    text = type_coerce(column, String())
    fraction = func.substr(text, 21)
    return and_(
        func.typeof(column) == "text",
        func.substr(text, 1, 19).op("GLOB")(_DIGITS_19),
        or_(
            func.length(text) == 19,
            and_(func.substr(text, 20, 1) == ".", func.length(text) <= 26,
                 fraction.op("GLOB")("[0-9]*"), fraction.op("NOT GLOB")("*[^0-9]*")),
        ),
    )
