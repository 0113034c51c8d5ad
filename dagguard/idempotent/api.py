"""Entry points that open their own connection: what the CLI calls."""

from __future__ import annotations

from typing import Any

from dagguard.idempotent import ledger
from dagguard.idempotent.connections import connect_url
from dagguard.idempotent.engines import engine_for
from dagguard.idempotent.errors import IdempotentWriteError, LedgerError


def read_ledger(conn: Any, table: str | None = None) -> ledger.LedgerReport:
    """The ledger of a database given as a URL (opened read-only) or a DB-API connection."""
    if not isinstance(conn, str):
        return _read(engine_for(conn), table)
    engine = engine_for(connect_url(conn, read_only=True))
    try:
        return _read(engine, table)
    finally:
        engine.close()


def _read(engine: Any, table: str | None) -> ledger.LedgerReport:
    try:
        if hasattr(engine, "read_ledger"):  # a table format (Delta Lake) keeps its ledger itself
            return engine.read_ledger(table)
        return ledger.read_ledger(engine, table)
    except IdempotentWriteError:
        raise
    except Exception as exc:  # the driver's own errors: one clear line, not a traceback
        raise LedgerError(f"cannot read {ledger.LEDGER_TABLE}: {' '.join(str(exc).split())}") from exc
