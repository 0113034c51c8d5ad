"""Which rows of a SQLite table lie in an interval, when the time column is text in any of the
forms SQLite's date functions read, not only the one dagguard writes.

SQLite has no time type: a time is text such as '2026-01-04 00:00:00', '2026-01-04T01:00Z' or
'2026-01-05 01:00:00+02:00', and those texts do not sort in time order. Comparing them as text
put the next day's midnight in the interval and this day's rows written in another form out of
it. The test here has two parts: a range on the raw text, widened so that every form of every
instant in the interval falls inside it (the index on the column narrows to it), and an exact
test of the instant each text stands for, read with SQLite's own date functions: julianday(),
and to the last digit of the fraction for the rare row within milliseconds of a bound. Where
every text in that range is in dagguard's own form (survey_sql finds out), the plain range on
the text is exact, and the engine keeps it.

What counts as SQLite reads it: 'YYYY-MM-DD', then optionally T or spaces and HH:MM[:SS[.f]],
then optionally Z or ±HH:MM; no offset is UTC; a day past the month's end or hour 24 runs on
into the next. The fraction is compared to its last digit (SQLite's functions round it to the
millisecond). Numbers (unix or julian times) are not read: they are refused, like any value
SQLite cannot read near the interval.

A partition column (overwrite_partition's `ds`) is read the same way: its partition is the
UTC date of what SQLite reads its text as, so the partition of 2026-01-04 is the interval
[2026-01-04 00:00Z, 2026-01-05 00:00Z) of those instants, and dagguard's own form of it is the
plain 'YYYY-MM-DD'.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any

# SQLite reads offsets up to ±14:59, and hour 24 as the next day's hour 0: the local date of a
# text can be this far from the UTC instant it stands for.
_REACH_BEFORE = timedelta(hours=15 + 25)
_REACH_AFTER = timedelta(hours=15)
# Bounds of the raw-text range outside the years a datetime has. Neither looks like a number:
# a column of numeric affinity would compare a number-like bound as a number.
_LOWEST, _HIGHEST = "0-", "9999-12-32"
# Text not starting with a digit (and numbers and blobs, which sort before and after all text)
# cannot be placed by its text: such values are refused wherever they are.
_BELOW_DIGITS, _ABOVE_DIGITS = "0-", ":"
# julianday() reads the fraction to the millisecond: a row this near a bound is read exactly.
_MARGIN = 2 / 86_400_000
_UNIX_EPOCH_JULIAN_DAY = 2440587.5


@dataclass(frozen=True)
class TextRange:
    """The half-open range of raw text that holds every form of every instant of an interval."""

    low: str
    high: str


def text_range(start: datetime, end: datetime) -> TextRange:
    """Dates as text: every form of a time starts with its local date, and a text whose day is
    past the month's end ('2026-02-30') sorts after the month's last real day."""
    try:
        first = (start - _REACH_BEFORE).date()
        low = _overflowing_day(first) or first.isoformat()
    except OverflowError:
        low = _LOWEST
    try:
        high = ((end + _REACH_AFTER).date() + timedelta(days=1)).isoformat()
    except OverflowError:
        high = _HIGHEST
    return TextRange(low, high)


def _overflowing_day(first: date) -> str | None:
    """The smallest past-the-end day of the month before `first`'s that SQLite reads as `first`
    or later (2026-03-02: '2026-02-30'); None when none does (days run up to 31)."""
    last = first.replace(day=1) - timedelta(days=1)
    day = last.day + first.day
    return f"{last.year:04d}-{last.month:02d}-{day:02d}" if day <= 31 else None


def _instant(column: str) -> str:
    """SQL: the UTC instant `column`'s text stands for, as 'YYYY-MM-DD HH:MM:SS.' and the
    fraction's digits as written; NULL where SQLite cannot read it.

    The fraction is cut out and kept as text, the rest normalised by datetime() (offset, hour
    24, days past the month's end): SQLite's own reading, without its rounding to milliseconds."""
    dot = f"instr({column}, '.')"
    after_digits = f"ltrim(substr({column}, {dot} + 1), '0123456789')"
    whole = f"CASE WHEN {dot} THEN substr({column}, 1, {dot} - 1) || {after_digits} ELSE {column} END"
    digits = (f"CASE WHEN {dot} THEN substr({column}, {dot} + 1, length({column}) - {dot} - "
              f"length({after_digits})) ELSE '' END")
    return f"(datetime({whole}, '+0 seconds') || '.' || {digits})"


def _instant_bound(value: datetime) -> str:
    """An interval bound in _instant()'s form, its fraction without trailing zeros: compared
    as text, '.5' and '.50' then fall on the same side of it."""
    utc = value.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%d %H:%M:%S.") + f"{utc.microsecond:06d}".rstrip("0")


def _written_form(column: str) -> str:
    """SQL: true where `column` is text in dagguard's own form, 'YYYY-MM-DD HH:MM:SS.ffffff+00:00',
    whose text order is its time order. date() answers NULL for a text SQLite cannot read and
    runs days past the month's end and hour 24 on into the next day; with the last fraction
    digit a digit, SQLite reads six of them. (A GLOB of digit classes costs 7 times as much.)
    IS, not =: false, not NULL, where date() is NULL, so that NOT of it is true."""
    return f"({column} GLOB '????-??-?? ??:??:??.?????[0-9]+00:00' AND date({column}) IS substr({column}, 1, 10))"


def _readable_form(column: str) -> str:
    """SQL: true where `column` has the shape of dagguard's form and SQLite reads it: dagguard's
    form unless its hour is 24 or its day past the month's end, which _run_on_ranges finds
    through the index instead. julianday() reads the text once; _written_form's date() also
    formats a date and cuts a substring (2M rows: 0.23 s against 0.33 s over the index range)."""
    return f"({column} GLOB '????-??-?? ??:??:??.?????[0-9]+00:00' AND julianday({column}) IS NOT NULL)"


def _written_date(column: str) -> str:
    """SQL: true where `column` is text in dagguard's form of a partition value, 'YYYY-MM-DD',
    a real day (date() runs '2026-02-30' on into March)."""
    return f"({column} GLOB '????-??-??' AND date({column}) IS {column})"


def _readable_date(column: str) -> str:
    """SQL: _written_date's test less the days past the month's end, left to _run_on_ranges."""
    return f"({column} GLOB '????-??-??' AND julianday({column}) IS NOT NULL)"


# More days than this in a survey's text range and it reads date() on each row instead of
# probing two ranges a day (a long interval's SQL would grow with its days).
_MOST_PROBED_DAYS = 62


def _run_on_ranges(span: TextRange, partition: bool) -> list[tuple[str, str]] | None:
    """The text ranges within `span` of the texts SQLite reads, in dagguard's shape, as another
    day than their own first ten characters say: hour 24 ('2026-01-04 24:00:00...', not for a
    partition's plain date) and the days past each month's end ('2026-02-29' to '2026-02-31');
    None where the span's bounds are not dates or it holds too many days."""
    try:
        first, last = date.fromisoformat(span.low[:8] + "01"), date.fromisoformat(span.high[:8] + "01")
        if (last - first).days > _MOST_PROBED_DAYS:
            return None
        ranges = []
        month = first
        while month <= last:
            following = (month + timedelta(days=31)).replace(day=1)  # OverflowError after 9999-12
            prefix = month.isoformat()[:8]
            length = (following - month).days
            if not partition:
                ranges += [(f"{prefix}{day:02d} 24", f"{prefix}{day:02d} 25") for day in range(1, length + 1)]
            if length < 31:
                ranges.append((f"{prefix}{length + 1:02d}", f"{prefix}32"))
            month = following
    except (ValueError, OverflowError):
        return None
    clipped = [(max(low, span.low), min(high, span.high)) for low, high in ranges]
    clipped = [(low, high) for low, high in clipped if low < high]
    return clipped if len(clipped) <= _MOST_PROBED_DAYS + 2 else None


def day_interval(day: date) -> tuple[datetime, datetime]:
    """The instants whose UTC date is `day`: the partition `day` of a text partition column."""
    start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    return start, start + timedelta(days=1)


def _julian_day(value: datetime) -> float:
    """What julianday() answers for the instant `value`."""
    return _UNIX_EPOCH_JULIAN_DAY + value.timestamp() / 86400


def exact_test(column: str, start: datetime, end: datetime) -> tuple[str, tuple[Any, ...]]:
    """SQL true where `column` stands for an instant in [start, end), and its parameters.

    julianday() (one call, in C) decides every row more than _MARGIN from a bound; only rows
    that near one are read to the last digit by _instant(), a dozen calls."""
    span = text_range(start, end)
    day = f"julianday({column})"
    exact = f"{_instant(column)} >= ? AND {_instant(column)} < ?"
    sql = (f"{column} >= ? AND {column} < ? AND CASE WHEN {day} < ? THEN 0 WHEN {day} < ? THEN {exact} "
           f"WHEN {day} < ? THEN 1 WHEN {day} < ? THEN {exact} ELSE 0 END")
    first, last = _julian_day(start), _julian_day(end)
    bounds = (_instant_bound(start), _instant_bound(end))
    return sql, (span.low, span.high, first - _MARGIN, first + _MARGIN, *bounds,
                 last - _MARGIN, last + _MARGIN, *bounds)


def survey_sql(table: str, column: str, span: TextRange, partition: bool = False) -> tuple[str, tuple[str, ...]]:
    """SQL over the text range `span`, and its parameters: one row (value, unreadable) for a
    value not in dagguard's written form (of a time, or of a partition's date where
    `partition`), an unreadable one first, or none when every value is in that form; values not
    starting with a digit count as unreadable wherever they are.

    Each row of the span is read once by julianday(); the few texts in dagguard's shape that
    SQLite reads as another day (hour 24, days past the month's end) are index ranges of their
    own, so no row pays for date()'s formatting."""
    probes = _run_on_ranges(span, partition)
    if probes is None:
        written = _written_date(column) if partition else _written_form(column)
        probes = []
    else:
        written = _readable_date(column) if partition else _readable_form(column)
    unreadable = f"({column} < '{_BELOW_DIGITS}' OR {column} >= '{_ABOVE_DIGITS}' OR julianday({column}) IS NULL)"
    ranges = "".join(f" OR ({column} >= ? AND {column} < ?)" for _ in probes)
    sql = (f"SELECT {column}, {unreadable} FROM {table} WHERE ({column} >= ? AND {column} < ? AND NOT "
           f"{written}){ranges} OR {column} < '{_BELOW_DIGITS}' OR {column} >= '{_ABOVE_DIGITS}' "
           f"ORDER BY 2 DESC LIMIT 1")
    return sql, (span.low, span.high, *(bound for probe in probes for bound in probe))
