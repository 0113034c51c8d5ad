"""DG901 stuck-backfill-runs: queued runs held by a completed backfill whose is_paused is still true.

Airflow 3.0-3.3 (apache/airflow#72337): cancelling a backfill sets is_paused and completed_at;
the scheduler's promotion query skips runs of paused backfills and never reads completed_at,
so a run of that backfill cleared later stays queued forever. The scheduler joins the backfill
through backfill_dag_run on both dag_run_id and backfill_id; a run only linked by
dag_run.backfill_id is promoted, so this check uses the same join.
"""

from __future__ import annotations

from sqlalchemy import and_, true
from sqlalchemy.engine import Row
from sqlalchemy.sql import Select

from dagguard.doctor.checks.context import QUEUED, CheckContext, select_runs
from dagguard.doctor.model import BackfillRow, Finding, RunRow, format_time
from dagguard.doctor.tables import MetadataTables
from dagguard.doctor.times import stored_value

CODE = "DG901"
NAME = "stuck-backfill-runs"
SUMMARY = "queued runs held forever by a cancelled (completed) backfill still marked paused"
UPSTREAM_ISSUE = "https://github.com/apache/airflow/issues/72337"


def stuck_runs_query(tables: MetadataTables) -> Select:
    """Queued runs linked through backfill_dag_run to a backfill that is paused and completed."""
    run, link, backfill = tables.dag_run, tables.backfill_dag_run, tables.backfill
    return (
        select_runs(tables)
        .add_columns(
            backfill.c.id.label("bf_id"),
            backfill.c.dag_id.label("bf_dag_id"),
            backfill.c.is_paused.label("bf_is_paused"),
            stored_value(backfill.c.completed_at, "bf_completed_at"),
            stored_value(backfill.c.created_at, "bf_created_at"),
        )
        .select_from(
            run.join(link, and_(link.c.dag_run_id == run.c.id, link.c.backfill_id == run.c.backfill_id))
            .join(backfill, backfill.c.id == link.c.backfill_id)
        )
        .where(
            run.c.state == QUEUED,
            backfill.c.is_paused == true(),
            backfill.c.completed_at.is_not(None),
        )
        .order_by(run.c.dag_id, backfill.c.id, run.c.logical_date, run.c.id)
    )


def backfill_from_row(row: Row) -> BackfillRow:
    """The backfill columns of a stuck_runs_query row."""
    values = row._mapping
    return BackfillRow.from_stored(
        id=values["bf_id"],
        dag_id=values["bf_dag_id"],
        is_paused=bool(values["bf_is_paused"]),
        completed_at=values["bf_completed_at"],
        created_at=values["bf_created_at"],
    )


def run(ctx: CheckContext) -> list[Finding]:
    """One finding per stuck run."""
    findings = []
    for row in ctx.conn.execute(stuck_runs_query(ctx.tables)):
        dag_run = RunRow.from_row(row)
        backfill = backfill_from_row(row)
        findings.append(Finding(
            code=CODE,
            check=NAME,
            dag_id=dag_run.dag_id,
            message=(
                f"DAG '{dag_run.dag_id}' run '{dag_run.run_id}' is stuck in queued: backfill "
                f"{backfill.id} was cancelled at {format_time(backfill.completed_at)} but is still paused, so the scheduler "
                "never promotes the run"
            ),
            help=(
                f"run `dagguard doctor --repair {NAME}` to clear the stale pause flag of completed "
                f"backfill {backfill.id} (Airflow bug {UPSTREAM_ISSUE})"
            ),
            runs=(dag_run,),
            backfill=backfill,
            explains_run_ids=frozenset({dag_run.id}),
        ))
    return findings
