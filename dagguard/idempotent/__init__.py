"""Runtime helpers that make re-running or backfilling an interval unable to duplicate or lose rows.

    from dagguard.idempotent import idempotent_write, write_interval, Interval

Importing this package needs neither Airflow nor any database driver: they are imported when
used. `IntervalMergeOperator` subclasses Airflow's BaseOperator, so it is built on first access.
"""

from __future__ import annotations

from typing import Any

from dagguard.idempotent.decorator import idempotent_write
from dagguard.idempotent.backfill import backfill_batches, write_intervals
from dagguard.idempotent.errors import (AirflowRequiredError, ArgumentTypeError, BackfillBatchError,
                                        ConcurrentWriteError,
                                        ConnectionFailedError, DatabaseRefusedError, EmptyIntervalError,
                                        IdempotentWriteError, IntervalViolationError, InvalidArgumentError,
                                        NoRunIntervalError,
                                        InvalidIdentifierError, LedgerError, TargetTableError,
                                        UnsupportedConnectionError)
from dagguard.idempotent.interval import Interval
from dagguard.idempotent.partitions import interval_from_context
from dagguard.idempotent.ledger import LedgerReport, RunInfo
from dagguard.idempotent.write import WriteResult, write_interval

__all__ = [
    "AirflowRequiredError", "ArgumentTypeError", "BackfillBatchError", "ConcurrentWriteError", "ConnectionFailedError", "DatabaseRefusedError",
    "DeltaLake", "EmptyIntervalError",
    "IdempotentWriteError", "Interval", "IntervalMergeOperator", "IntervalViolationError",
    "InvalidArgumentError", "InvalidIdentifierError", "LedgerError", "LedgerReport", "NoRunIntervalError", "RunInfo",
    "TargetTableError",
    "UnsupportedConnectionError", "WriteResult", "idempotent_write", "interval_from_context",
    "backfill_batches", "read_ledger", "write_interval", "write_intervals",
]


def __getattr__(name: str) -> Any:
    # Lazy: importing Airflow costs seconds and must not be needed for write_interval.
    if name == "IntervalMergeOperator":
        from dagguard.idempotent.errors import require_airflow

        require_airflow("IntervalMergeOperator")
        from dagguard.idempotent.operators import IntervalMergeOperator

        return IntervalMergeOperator
    if name == "DeltaLake":  # a lake with storage options; importing it needs no deltalake
        from dagguard.idempotent.engines.delta import DeltaLake

        return DeltaLake
    if name == "read_ledger":
        from dagguard.idempotent.api import read_ledger

        return read_ledger
    raise AttributeError(f"module 'dagguard.idempotent' has no attribute {name!r}")
