"""DG102: no max_active_runs, so up to 16 runs of the DAG run at once."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from dagguard.model.dags.models import DagModel, FileModel
from dagguard.model.schedules.schedules import is_continuous, recurs_on_a_clock
from dagguard.model.schedules.unscheduled import never_scheduled
from dagguard.rules.base import UNSAFE, Fix, Report, Rule, RuleContext
from dagguard.rules.edits import add_dag_keyword_fix
from dagguard.rules.ignored_default_args import noting_default_args
from dagguard.rules.messages import DG102_HELP, missing_max_active_runs


class MissingMaxActiveRuns(Rule):
    code = "DG102"
    name = "missing-max-active-runs"
    severity = "warning"
    fixable = True
    summary = "The DAG sets no max_active_runs: up to 16 of its runs may run at once"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        settings = context.settings
        for dag in file.dags:
            if never_scheduled(file, dag, context.path, context.settings.root):
                continue  # a SubDAG or a test's DAG: never scheduled by itself
            if not dag.accepts("max_active_runs"):
                continue  # an @asset DAG: Airflow gives it no way to set one
            if not dag.surely_lacks("max_active_runs"):
                continue
            if is_continuous(dag):
                # ContinuousTimetable's active_runs_limit is 1: the default of 16 is refused.
                yield Report(
                    node=dag.report_node,
                    message=f"{dag.label} is scheduled @continuous and sets no max_active_runs; Airflow "
                            "requires max_active_runs <= 1 for it and the DAG does not load",
                    help=noting_default_args("set max_active_runs=1", dag, "max_active_runs"),
                    dag=dag,
                    severity="error",
                    fix=_fix(dag, 1),
                )
            elif recurs_on_a_clock(dag, settings.airflow_version, settings.create_cron_data_intervals):
                # Only a recurring schedule queues a backlog (catchup, backfills): see the rule page.
                yield Report(
                    node=dag.report_node,
                    message=missing_max_active_runs(dag.label),
                    help=noting_default_args(DG102_HELP, dag, "max_active_runs"),
                    dag=dag,
                    fix=_fix(dag, context.settings.fix_max_active_runs),
                )


def _fix(dag: DagModel, value: int) -> Optional[Fix]:
    """Bounding the DAG changes how many of its runs may run at once: unsafe."""
    return add_dag_keyword_fix(dag, "max_active_runs", cst.Integer(str(value)), UNSAFE)
