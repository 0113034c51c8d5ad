"""Errors a DAG author can cause; each carries a message that says what to change."""

from __future__ import annotations

from dagguard.extras import install_hint


class IdempotentWriteError(Exception):
    """Base class of every error raised by dagguard.idempotent."""


class EmptyIntervalError(IdempotentWriteError):
    """The run has no data interval to write (start == end, or no logical date)."""


class NoRunIntervalError(EmptyIntervalError):
    """The run has neither a data interval nor a partition to write (a manual or asset-triggered
    run without a logical date, on a DAG that is not partitioned)."""


class IntervalViolationError(IdempotentWriteError):
    """The batch does not fit the interval: rows outside it, NULL times, duplicate keys, or times
    finer than their column stores; or the table's rows cannot be placed in the interval or
    partition (a stored time or date that cannot be read as one)."""


class InvalidArgumentError(IdempotentWriteError, ValueError):
    """An argument that cannot be right: an unknown strategy, a missing time_column or
    unique_key, a naive or reversed interval. A ValueError too, so `except ValueError` works."""


class ArgumentTypeError(IdempotentWriteError, TypeError):
    """An argument of the wrong type: a date or a string as an interval bound, a tuple as the
    interval. A TypeError too."""


class InvalidIdentifierError(InvalidArgumentError):
    """A table or column name that is not a plain SQL identifier."""


class TargetTableError(IdempotentWriteError):
    """The target table is missing, lacks a column of the batch, or cannot take the strategy."""


class UnsupportedConnectionError(IdempotentWriteError):
    """A connection whose database or driver dagguard cannot write to."""


class ConnectionFailedError(IdempotentWriteError):
    """Opening a connection from a URL failed."""


class DatabaseRefusedError(IdempotentWriteError):
    """The database refused a statement of the write (a constraint, a value its column cannot
    hold, a read-only or closed connection); the transaction was rolled back. The driver's
    exception is the __cause__."""


class ConcurrentWriteError(IdempotentWriteError):
    """Another writer kept conflicting with this one after every retry."""


class BackfillBatchError(IdempotentWriteError):
    """write_intervals failed at one batch; the batches before it are written. `failed`: the
    failed batch's Interval (None when reading the next batch failed), `resume_from`: the
    instant to resume the backfill from (None: from the first batch), `written`: the
    WriteResults of the batches written. The original error is the __cause__."""

    def __init__(self, message: str, *, failed: object = None, resume_from: object = None,
                 written: tuple[object, ...] = ()) -> None:
        super().__init__(message)
        self.failed = failed
        self.resume_from = resume_from
        self.written = written


class LedgerError(IdempotentWriteError):
    """The ledger table cannot be read."""


class AirflowRequiredError(IdempotentWriteError, ImportError):
    """A helper that only makes sense inside Airflow was used without Airflow installed."""


AIRFLOW_HINT = f"install it with: {install_hint('airflow')}"


def require_airflow(what: str) -> None:
    """Raise AirflowRequiredError naming `what` when apache-airflow cannot be imported."""
    try:
        import airflow.sdk  # noqa: F401
    except ImportError as exc:
        raise AirflowRequiredError(f"{what} needs apache-airflow>=3; {AIRFLOW_HINT}") from exc
