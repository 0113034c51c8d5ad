"""DG902 catchup-flood: DAGs with more queued scheduled runs than a threshold, or, with --since
(a deploy time), more scheduled runs created after it.

Every one of those runs executes and writes its interval: the evidence lists each affected
interval, which `--format csv` exports for the warehouse team that must deduplicate them.
Mitigation commands are printed, never run.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, func, select

from dagguard.doctor.checks.context import QUEUED, CheckContext, created_column, select_runs
from dagguard.doctor.model import Finding, RunRow, format_time

CODE = "DG902"
NAME = "catchup-flood"
SUMMARY = "a DAG with more queued (or, with --since, newly created) scheduled runs than a threshold"
SCHEDULED = "scheduled"


def run(ctx: CheckContext) -> list[Finding]:
    """One finding per flooded DAG, with the affected runs as evidence."""
    queued = _queued_counts(ctx)
    created = _created_since_counts(ctx)
    threshold = ctx.options.max_queued
    flooded = sorted(dag_id for dag_id in set(queued) | set(created)
                     if queued.get(dag_id, 0) > threshold or created.get(dag_id, 0) > threshold)
    return [_finding(ctx, dag_id, queued.get(dag_id, 0), created.get(dag_id)) for dag_id in flooded]


def _queued_counts(ctx: CheckContext) -> dict[str, int]:
    run = ctx.tables.dag_run
    query = (
        select(run.c.dag_id, func.count())
        .where(run.c.state == QUEUED, run.c.run_type == SCHEDULED)
        .group_by(run.c.dag_id)
    )
    return {dag_id: count for dag_id, count in ctx.conn.execute(query)}


def _created_since_counts(ctx: CheckContext) -> dict[str, int]:
    if ctx.options.since is None:
        return {}
    run = ctx.tables.dag_run
    query = (
        select(run.c.dag_id, func.count())
        .where(run.c.run_type == SCHEDULED, _created_since(ctx))
        .group_by(run.c.dag_id)
    )
    return {dag_id: count for dag_id, count in ctx.conn.execute(query)}


def _created_since(ctx: CheckContext) -> ColumnElement[bool]:
    created = created_column(ctx.tables)
    assert ctx.options.since is not None
    return and_(ctx.comparable(created), created >= ctx.db_time(ctx.options.since))


def _affected_runs(ctx: CheckContext, dag_id: str) -> tuple[RunRow, ...]:
    """With --since, every scheduled run created after it (any state); else the queued ones."""
    run = ctx.tables.dag_run
    query = select_runs(ctx.tables).where(run.c.dag_id == dag_id, run.c.run_type == SCHEDULED)
    if ctx.options.since is not None:
        query = query.where(_created_since(ctx))
    else:
        query = query.where(run.c.state == QUEUED)
    query = query.order_by(run.c.data_interval_start, run.c.logical_date, run.c.id)
    return tuple(RunRow.from_row(row) for row in ctx.conn.execute(query))


def _queued_ids(ctx: CheckContext, dag_id: str) -> frozenset[int]:
    run = ctx.tables.dag_run
    query = select(run.c.id).where(run.c.dag_id == dag_id, run.c.state == QUEUED)
    return frozenset(ctx.conn.execute(query).scalars())


def _finding(ctx: CheckContext, dag_id: str, queued: int, created: int | None) -> Finding:
    since = ctx.options.since
    parts = [f"DAG '{dag_id}' has {queued} queued scheduled runs"]
    if since is not None:
        parts.append(f"{created or 0} scheduled runs created since {format_time(since)}")
    message = (
        f"{'; '.join(parts)} (threshold {ctx.options.max_queued}); each one will run and write "
        "its interval"
    )
    facts: list[tuple[str, object]] = [("queued_scheduled_runs", queued)]
    if since is not None:
        facts.append(("created_since", created or 0))
    return Finding(
        code=CODE,
        check=NAME,
        dag_id=dag_id,
        message=message,
        help=(
            f"pause it with `airflow dags pause {dag_id}`, then review the listed intervals "
            "(`--format csv` exports them) before unpausing"
        ),
        runs=_affected_runs(ctx, dag_id),
        # Every queued run of a flooded DAG is accounted for, not only the listed ones.
        explains_run_ids=_queued_ids(ctx, dag_id),
        facts=tuple(facts),
    )
