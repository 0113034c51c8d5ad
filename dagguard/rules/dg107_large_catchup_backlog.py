"""DG107: catchup bounded by end_date, but the backlog is still larger than max-catchup-runs."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags.models import FileModel
from dagguard.model.schedules.schedules import catching_up, count_runs, dag_date, date_argument
from dagguard.model.schedules.unscheduled import never_scheduled
from dagguard.rules.base import Report, Rule, RuleContext
from dagguard.rules.messages import DG107_HELP, large_catchup_backlog


class LargeCatchupBacklog(Rule):
    code = "DG107"
    name = "large-catchup-backlog"
    severity = "warning"
    summary = "Catchup would create more runs than max-catchup-runs between start_date and end_date"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        settings = context.settings
        for dag in file.dags:
            if never_scheduled(file, dag, context.path, context.settings.root):
                continue  # a SubDAG or a test's DAG: never scheduled by itself
            end = dag_date(dag, "end_date")
            start = dag_date(dag, "start_date")
            if end is None or start is None:
                continue  # no end_date is DG101's finding; unknown dates stay silent
            rec = catching_up(dag, settings.airflow_version, settings.create_cron_data_intervals)
            if rec is None:
                continue
            runs = count_runs(rec, start, min(end, context.now))
            if runs is not None and runs > settings.max_catchup_runs:
                start_arg = date_argument(dag, "start_date")
                yield Report(
                    node=start_arg.report_node if start_arg else dag.report_node,
                    message=large_catchup_backlog(dag.label, runs, settings.max_catchup_runs),
                    help=DG107_HELP,
                    dag=dag, argument=start_arg,
                )
