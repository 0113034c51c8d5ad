"""DG105: no schedule argument at all; its meaning changed between Airflow 2 and 3."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags import FileModel
from dagguard.model.schedules import SCHEDULE_ARGUMENTS
from dagguard.rules.base import Report, Rule, RuleContext


class MissingSchedule(Rule):
    code = "DG105"
    name = "missing-schedule"
    severity = "warning"
    summary = "The DAG passes no schedule: daily on Airflow 2, never on Airflow 3"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        for dag in file.dags:
            if all(dag.args.surely_missing(name) for name in SCHEDULE_ARGUMENTS):
                yield Report(
                    node=dag.report_node,
                    message=f"{dag.label} passes no schedule; Airflow 3 never schedules it, "
                            "Airflow 2 ran it daily",
                    help='pass schedule=None for a manually triggered DAG, or a cron like "@daily"',
                    dag=dag,
                )
