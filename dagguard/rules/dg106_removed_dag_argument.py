"""DG106: DAG arguments Airflow 3 rejects with TypeError (or silently ignores)."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags import FileModel
from dagguard.rules.base import Report, Rule, RuleContext

# Checked against Airflow 3.3.2: DAG(**{name: ...}) raises TypeError for each of these.
REMOVED = {
    "schedule_interval": "pass schedule=... instead",
    "timetable": "pass the timetable as schedule=...",
    "concurrency": "use max_active_tasks=...",
    "default_view": "remove it; the view is a UI setting in Airflow 3",
    "orientation": "remove it; the graph orientation is a UI setting in Airflow 3",
    "full_filepath": "remove it",
    "fail_stop": "use fail_fast=...",
}
# Accepted but ignored: SLAs were removed in Airflow 3.
IGNORED = {"sla_miss_callback": "remove it, or use deadline alerts (deadline=DeadlineAlert(...))"}


class RemovedDagArgument(Rule):
    code = "DG106"
    name = "removed-dag-argument"
    severity = "error"
    summary = "The DAG passes an argument Airflow 3 rejects (TypeError) or ignores"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        severity = "warning" if context.settings.airflow_version == "2" else "error"
        for dag in file.dags:
            for name, arg in dag.args.values.items():
                if name in REMOVED:
                    yield Report(
                        node=arg.report_node,
                        message=f"{dag.label} passes {name}, which Airflow 3 rejects with a TypeError",
                        help=REMOVED[name],
                        dag=dag,
                        severity=severity,
                    )
                elif name in IGNORED:
                    yield Report(
                        node=arg.report_node,
                        message=f"{dag.label} passes {name}, which Airflow 3 accepts but never calls",
                        help=IGNORED[name],
                        dag=dag,
                        severity="warning",
                    )
