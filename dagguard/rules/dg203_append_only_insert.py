"""DG203: an INSERT or COPY appends to a table the task never clears or upserts into."""

from __future__ import annotations

from typing import Iterable, Optional

from dagguard.model.tasks.appends import unprepared_appends
from dagguard.model.dags.models import FileModel
from dagguard.model.tasks.task_io import file_task_ios, readable, runs_on_a_clock
from dagguard.rules.base import Report, Rule, RuleContext

HELP = ("delete the interval first in the same task (DELETE FROM ... WHERE ts >= '{{ data_interval_start }}' "
        "AND ts < '{{ data_interval_end }}'), use MERGE or INSERT ... ON CONFLICT, or "
        "dagguard.idempotent.IntervalMergeOperator")


class AppendOnlyInsert(Rule):
    code = "DG203"
    name = "append-only-insert"
    severity = "warning"
    summary = "An INSERT appends rows without a prior DELETE/TRUNCATE, MERGE or ON CONFLICT"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        # One finding per SQL text and table: a script of four INSERTs into one table is one
        # problem, reported once where the text is.
        seen: set[tuple[int, Optional[str]]] = set()
        settings = context.settings
        for io in file_task_ios(file, context.path):
            # One-off DAGs (None, @once, assets) append by design: each run brings new rows.
            if not runs_on_a_clock(io.dag, settings.airflow_version, settings.create_cron_data_intervals):
                continue
            for append in unprepared_appends(file, io, context.path, partial_clears=True):
                effect, source = append.effect, append.source
                if effect.table is None:
                    continue
                key = (id(source.node), effect.table)
                if key in seen:
                    continue
                seen.add(key)
                yield Report(
                    node=source.node,
                    message=f"{io.label} appends to {readable(file, effect.table)} with {effect.verb} and removes none of "
                            "its rows first; every re-run or backfill of the interval adds them again",
                    help=HELP,
                )
