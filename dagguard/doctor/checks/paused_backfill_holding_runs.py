"""DG903 paused-backfill-holding-runs: a paused, not completed backfill with queued runs.

Not a bug: the backfill was paused on purpose and can be resumed. Shown so nobody mistakes it
for the stuck-backfill bug, and so queued-never-scheduled does not report its runs.
"""

from __future__ import annotations

from itertools import groupby

from sqlalchemy import and_, true

from dagguard.doctor.checks.context import QUEUED, CheckContext, select_runs
from dagguard.doctor.model import BackfillRow, Finding, RunRow
from dagguard.doctor.times import stored_value

CODE = "DG903"
NAME = "paused-backfill-holding-runs"
SUMMARY = "a paused backfill that is not completed holds queued runs (expected, not the bug)"


def run(ctx: CheckContext) -> list[Finding]:
    """One finding per paused, uncompleted backfill that holds queued runs."""
    tables = ctx.tables
    run_table, link, backfill = tables.dag_run, tables.backfill_dag_run, tables.backfill
    query = (
        select_runs(tables)
        .add_columns(
            backfill.c.id.label("bf_id"),
            backfill.c.dag_id.label("bf_dag_id"),
            stored_value(backfill.c.created_at, "bf_created_at"),
        )
        .select_from(
            run_table.join(link, and_(link.c.dag_run_id == run_table.c.id,
                                      link.c.backfill_id == run_table.c.backfill_id))
            .join(backfill, backfill.c.id == link.c.backfill_id)
        )
        .where(
            run_table.c.state == QUEUED,
            backfill.c.is_paused == true(),
            backfill.c.completed_at.is_(None),
        )
        .order_by(backfill.c.id, run_table.c.logical_date, run_table.c.id)
    )
    findings = []
    for backfill_id, rows in groupby(ctx.conn.execute(query), key=lambda row: row._mapping["bf_id"]):
        rows = list(rows)
        runs = tuple(RunRow.from_row(row) for row in rows)
        first = rows[0]._mapping
        held = BackfillRow.from_stored(
            id=backfill_id, dag_id=first["bf_dag_id"], is_paused=True, completed_at=None,
            created_at=first["bf_created_at"],
        )
        findings.append(Finding(
            code=CODE,
            check=NAME,
            dag_id=held.dag_id,
            message=(
                f"backfill {backfill_id} of DAG '{held.dag_id}' is paused and not completed; it holds "
                f"{len(runs)} queued run{'s' if len(runs) != 1 else ''} until it is resumed (expected, "
                "not the stuck-backfill bug)"
            ),
            help=(
                f"resume it with PUT /api/v2/backfills/{backfill_id}/unpause, or cancel it with "
                f"PUT /api/v2/backfills/{backfill_id}/cancel"
            ),
            runs=runs,
            backfill=held,
            explains_run_ids=frozenset(dag_run.id for dag_run in runs),
            facts=(("queued_runs", len(runs)),),
        ))
    return findings
