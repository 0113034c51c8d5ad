"""DG201: a task writes, and nothing in what it writes depends on the run's data interval."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Iterable, Optional

from dagguard.model.tasks.appends import table_prepared, unprepared_appends
from dagguard.model.dags.models import FileModel
from dagguard.model.schedules.partitions import dag_partition_schedule
from dagguard.model.tasks.imported_callables import imported_callable
from dagguard.model.tasks.task_io import TaskIO, file_task_ios, readable, runs_on_a_clock
from dagguard.model.tasks.writes import matches_write_pattern, transfer_destination
from dagguard.rules.base import MADE_AT, Report, Rule, RuleContext

SQL_HELP = ("filter the source on '{{ data_interval_start }}' and '{{ data_interval_end }}' and replace "
            "that interval's rows (DELETE then INSERT in one task, or MERGE), or use "
            "dagguard.idempotent.IntervalMergeOperator (lookback=N also rewrites the N intervals before, for late rows)")
TRANSFER_HELP = ("key the destination on the interval, e.g. 'exports/{{ ds }}/orders.csv', and filter the "
                 "source query on '{{ data_interval_start }}' and '{{ data_interval_end }}'")
PYTHON_HELP = ("take data_interval_start and data_interval_end (or ds) as parameters and key the write on "
               "them, or write with @idempotent_write / write_interval from dagguard.idempotent "
               "(lookback=N also rewrites the N intervals before, for late rows)")


class WriteNotKeyedOnInterval(Rule):
    code = "DG201"
    name = "write-not-keyed-on-interval"
    severity = "error"
    summary = "A task writes, but neither filters nor keys its output on the run's data interval"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        reported: set[int] = set()
        settings = context.settings
        for io in file_task_ios(file, context.path):
            # Without a recurring schedule there is no interval to key on (manual, @once, assets);
            # a partitioned DAG's runs each stand for a partition, re-run and backfilled as one.
            partitioned = dag_partition_schedule(file, io.dag) is not None
            if io.keyed or not (partitioned or runs_on_a_clock(io.dag, settings.airflow_version,
                                                                settings.create_cron_data_intervals)):
                continue
            report = sql_write(file, io, context.path) or transfer_write(io) \
                or python_write(file, io, context.path, context.settings.write_task_patterns)
            if report is not None and partitioned:
                report = for_partitions(report)
            if report is not None and id(report.node) not in reported:
                reported.add(id(report.node))
                yield report


PARTITION_HELP = ("key the write on the run's partition: '{{ partition_key }}' in SQL and paths, the "
                  "partition_key or partition_date parameter in Python")


def for_partitions(report: Report) -> Report:
    """The report about a partitioned DAG's task: its runs have a partition, not an interval."""
    message = report.message.replace("the run's data interval", "the run's partition_key or partition_date")
    return dataclasses.replace(report, message=message.replace("every interval", "every partition"),
                               help=PARTITION_HELP)


def sql_write(file: FileModel, io: TaskIO, path: Path) -> Optional[Report]:
    """An INSERT ... SELECT or COPY (or any INSERT a callable runs) adding rows to a table that
    neither it nor an upstream task emptied first."""
    for append in unprepared_appends(file, io, path, partial_clears=False):
        effect = append.effect
        if effect.from_query or append.source.in_callable:
            return Report(
                node=append.source.node,
                message=f"{io.label} runs {effect.verb} {readable(file, effect.table or '')} and nothing in it refers to "
                        "the run's data interval; every run, re-run and backfill writes the same rows again",
                help=SQL_HELP,
            )
    return None


def transfer_write(io: TaskIO) -> Optional[Report]:
    """A `<Source>To<Destination>Operator` whose destination and query ignore the interval."""
    destination = transfer_destination(io.task)
    if destination is None:
        return None
    return Report(
        node=destination.argument.report_node,
        message=f"{io.label} ({destination.operator}) writes to {destination.argument.value!r} and neither the "
                "destination nor the source query refers to the run's data interval; every interval "
                "overwrites or duplicates the same target",
        help=TRANSFER_HELP,
    )


def python_write(file: FileModel, io: TaskIO, path: Path, patterns: tuple[str, ...]) -> Optional[Report]:
    """A Python task calling a write API, or named like a writer and calling a write-like method.
    Rows written to a table the task or an upstream task empties (or reads) first are not. The
    callable may be another module's (an imported @task function or python_callable): its body
    is then read there and the finding is made at the call, naming where the body writes."""
    facts, callable_ = io.callable, io.task.callable
    imported = imported_callable(file, io.task) if facts is None else None
    if imported is not None:
        if imported.facts.uses_interval or imported.facts.idempotent_helper:
            return None
        facts, callable_ = imported.facts, imported.home.node  # type: ignore[assignment]
    if facts is None or callable_ is None:
        return None
    writes = [w for w in facts.writes if w.kind == "api" and not w.upsert
              and not table_prepared(file, io, w.table, path)]
    if writes:
        first = writes[0]
        where = f" in its body ({MADE_AT})" if imported is not None else ""
        return Report(
            node=first.node if imported is None else io.task.node,
            message=f"{io.label} writes with {first.what}{where} and nothing it writes depends on the run's data "
                    "interval; a re-run or backfill writes the same target again",
            help=PYTHON_HELP, made_at=imported.at(first.node) if imported is not None else None,
        )
    if facts.writes or facts.sql or facts.returns_value or not facts.write_like_calls:
        return None  # judged by its SQL, an upsert, or a "load" task that returns what it loads
    if matches_write_pattern(io.task.task_id, patterns) or matches_write_pattern(callable_.name.value, patterns):
        where = f" (its body: {MADE_AT})" if imported is not None else ""
        return Report(
            node=callable_.name if imported is None else io.task.node,
            message=f"{io.label}{where} is named as a write, calls a write-like method and nothing in it depends "
                    "on the run's data interval; a re-run or backfill writes the same target again",
            help=PYTHON_HELP, made_at=imported.at(callable_.name) if imported is not None else None,
        )
    return None
