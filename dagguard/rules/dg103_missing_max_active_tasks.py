"""DG103: no max_active_tasks, so up to 16 of the DAG's tasks run at once across its runs."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags import FileModel
from dagguard.model.schedules import recurs_on_a_clock
from dagguard.rules.base import Report, Rule, RuleContext


class MissingMaxActiveTasks(Rule):
    code = "DG103"
    name = "missing-max-active-tasks"
    severity = "warning"
    summary = "The DAG sets no max_active_tasks: up to 16 of its tasks may run at once"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        # Airflow 2 also accepted the old name `concurrency`; Airflow 3 rejects it (DG106).
        settings = context.settings
        old_name_counts = settings.airflow_version == "2"
        for dag in file.dags:
            if not dag.surely_lacks("max_active_tasks") or (old_name_counts and "concurrency" in dag.args):
                continue
            # One run at a time has no backlog to flood with: see DG102's page.
            if recurs_on_a_clock(dag, settings.airflow_version, settings.create_cron_data_intervals):
                yield Report(
                    node=dag.report_node,
                    message=f"{dag.label} sets no max_active_tasks; up to 16 of its tasks can run at once",
                    help="set max_active_tasks to what its sources and targets can take",
                    dag=dag,
                )
