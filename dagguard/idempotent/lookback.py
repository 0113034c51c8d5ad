"""lookback=: widen a run's interval back over the intervals before it, for late-arriving rows."""

from __future__ import annotations

from datetime import timedelta
from dagguard.idempotent.errors import ArgumentTypeError, InvalidArgumentError
from dagguard.idempotent.interval import Interval



def check_lookback(lookback: int | timedelta | None, strategy: str) -> None:
    """A count of intervals (>= 0) or a non-negative timedelta; overwrite_partition owns one
    partition (one `ds`, or one Airflow partition key) and cannot widen: refused."""
    if lookback is None:
        return
    if isinstance(lookback, bool) or not isinstance(lookback, (int, timedelta)):
        raise ArgumentTypeError(f"lookback must be a number of intervals (an int) or a datetime.timedelta, "
                                f"not a {type(lookback).__name__}: {lookback!r}")
    if (lookback < timedelta(0)) if isinstance(lookback, timedelta) else lookback < 0:
        raise InvalidArgumentError(f"lookback must not be negative, got {lookback!r}")
    if strategy == "overwrite_partition" and lookback:
        raise InvalidArgumentError(
            f"lookback={lookback!r} widens the write over earlier intervals, and strategy='overwrite_partition' "
            f"owns exactly one partition (one ds, or the run's partition key); use strategy='replace' or "
            f"'merge' with time_column= to pick up late rows, or write each earlier partition in its own run")


def widen(interval: Interval, lookback: int | timedelta | None) -> Interval:
    """`interval` with its start moved back by `lookback` intervals of its own length, or by the
    timedelta `lookback`; unchanged for 0 or None."""
    if not lookback:
        return interval
    back = lookback if isinstance(lookback, timedelta) else (interval.end - interval.start) * lookback
    return Interval(interval.start - back, interval.end)
