"""DG904 queued-never-scheduled: queued runs of unpaused DAGs, older than a threshold, that the
scheduler never looked at (last_scheduling_decision NULL) and no other check explains.
"""

from __future__ import annotations

from sqlalchemy import false

from dagguard.doctor.checks.context import QUEUED, CheckContext, select_runs
from dagguard.doctor.model import Finding, RunRow

CODE = "DG904"
NAME = "queued-never-scheduled"
SUMMARY = "an old queued run of an unpaused DAG that the scheduler never examined, unexplained"


def run(ctx: CheckContext) -> list[Finding]:
    """One finding per unexplained, old, never-examined queued run."""
    run_table, dag = ctx.tables.dag_run, ctx.tables.dag
    cutoff = ctx.now - ctx.options.queued_age
    query = (
        select_runs(ctx.tables)
        .add_columns(dag.c.is_stale.label("dag_is_stale"))
        .select_from(run_table.join(dag, dag.c.dag_id == run_table.c.dag_id))
        .where(
            run_table.c.state == QUEUED,
            run_table.c.last_scheduling_decision.is_(None),
            ctx.comparable(run_table.c.queued_at),
            run_table.c.queued_at < ctx.db_time(cutoff),
            # A run whose run_after is still ahead is waiting by design.
            ctx.comparable(run_table.c.run_after),
            run_table.c.run_after <= ctx.db_time(ctx.now),
            dag.c.is_paused == false(),
        )
        .order_by(run_table.c.queued_at, run_table.c.id)
    )
    findings = []
    for row in ctx.conn.execute(query):
        dag_run = RunRow.from_row(row)
        if dag_run.id in ctx.explained:
            continue
        # queued_at is None only when it has Airflow's form but is no date (2026-02-31): noted.
        age = (f"for {int((ctx.now - dag_run.queued_at).total_seconds() // 60)} min"
               if dag_run.queued_at else "since an unreadable queued_at")
        stale = " (its DAG is stale: its file is gone from the bundle)" if row._mapping["dag_is_stale"] else ""
        findings.append(Finding(
            code=CODE,
            check=NAME,
            dag_id=dag_run.dag_id,
            message=(
                f"DAG '{dag_run.dag_id}' run '{dag_run.run_id}' has been queued {age} "
                f"and the scheduler never examined it{stale}"
            ),
            help=(
                "check that a scheduler is running and heartbeating, and the DAG's max_active_runs; "
                f"list them with `airflow dags list-runs {dag_run.dag_id} --state queued`"
            ),
            runs=(dag_run,),
            explains_run_ids=frozenset({dag_run.id}),
        ))
    return findings
