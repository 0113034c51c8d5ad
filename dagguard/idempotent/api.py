"""Entry points that open their own connection: what the CLI calls."""

from __future__ import annotations

from typing import Any

from dagguard.idempotent import ledger
from dagguard.idempotent.connections import connect_url
from dagguard.idempotent.engines import engine_for


def read_ledger(conn: Any, table: str | None = None) -> ledger.LedgerReport:
    """The ledger of a database given as a URL (opened read-only) or a DB-API connection."""
    if isinstance(conn, str):
        engine = engine_for(connect_url(conn, read_only=True))
        try:
            return ledger.read_ledger(engine, table)
        finally:
            engine.close()
    return ledger.read_ledger(engine_for(conn), table)
