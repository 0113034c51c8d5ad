"""DG105: no schedule argument at all; its meaning changed between Airflow 2 and 3."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from dagguard.model.dags.models import DagModel, FileModel
from dagguard.model.schedules.schedules import SCHEDULE_ARGUMENTS
from dagguard.model.schedules.unscheduled import never_scheduled
from dagguard.rules.base import SAFE, Fix, Import, Report, Rule, RuleContext
from dagguard.rules.edits import add_dag_keyword_fix


class MissingSchedule(Rule):
    code = "DG105"
    name = "missing-schedule"
    severity = "warning"
    fixable = True
    summary = "The DAG passes no schedule: daily on Airflow 2, never on Airflow 3"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        for dag in file.dags:
            # A SubDAG or a test's DAG needs no schedule: its parent's SubDagOperator, or the
            # test, runs it.
            if all(dag.args.surely_missing(name) for name in SCHEDULE_ARGUMENTS) \
                    and not never_scheduled(file, dag, context.path, context.settings.root):
                if dag.asset_decorator is not None:
                    # `schedule` is a required keyword of @asset (Airflow 3.3.2's _DAGFactory).
                    yield Report(
                        node=dag.report_node,
                        message=f"{dag.label} ({dag.asset_decorator}) passes no schedule, which {dag.asset_decorator} "
                                "requires; the file fails to load with TypeError",
                        help='pass schedule=None for an asset materialized on demand, or a cron like "@daily"',
                        dag=dag,
                        severity="error",
                        fix=add_dag_keyword_fix(dag, "schedule", cst.Name("None"), SAFE),
                    )
                    continue
                yield Report(
                    node=dag.report_node,
                    message=f"{dag.label} passes no schedule; Airflow 3 never schedules it, "
                            "Airflow 2 ran it daily",
                    help='pass schedule=None for a manually triggered DAG, or a cron like "@daily"',
                    dag=dag,
                    fix=_fix(dag, context.settings.airflow_version),
                )


def _fix(dag: DagModel, airflow_version: str) -> Optional[Fix]:
    """The schedule the DAG already has, made explicit: none on Airflow 3; on Airflow 2 the
    default `timedelta(days=1)` (a day from start_date, not midnight's "@daily")."""
    if airflow_version == "3":
        return add_dag_keyword_fix(dag, "schedule", cst.Name("None"), SAFE)
    return add_dag_keyword_fix(dag, "schedule", cst.parse_expression("timedelta(days=1)"), SAFE,
                               (Import("datetime", "timedelta"),))
