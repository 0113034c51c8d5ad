"""DG101: catchup on, no end_date, recurring schedule: every missed interval since start_date
is queued at once."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags import FileModel
from dagguard.model.schedules import catching_up, count_runs, dag_date, format_count
from dagguard.rules.base import Report, Rule, RuleContext


class CatchupWithoutEndDate(Rule):
    code = "DG101"
    name = "catchup-without-end-date"
    severity = "error"
    summary = "Catchup is on with no end_date: the scheduler queues every interval since start_date"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        settings = context.settings
        for dag in file.dags:
            if not dag.surely_lacks("end_date", or_default_args=True):
                continue
            rec = catching_up(dag, settings.airflow_version, settings.create_cron_data_intervals)
            if rec is None:
                continue
            message = f"{dag.label} enables catchup without end_date"
            start = dag_date(dag, "start_date")
            if start is not None:
                runs = count_runs(rec, start, context.now)
                message += f"; catchup would queue {format_count(runs)} runs"
            catchup = dag.args.get("catchup")
            yield Report(
                node=catchup.report_node if catchup is not None else dag.report_node,
                message=message,
                help="set end_date=... to bound the backfill, or catchup=False",
                dag=dag,
            )
