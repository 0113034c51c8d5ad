"""DG103: no max_active_tasks, so up to 16 of the DAG's tasks run at once across its runs."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from dagguard.model.dags import DagModel, FileModel
from dagguard.model.schedules import recurs_on_a_clock
from dagguard.model.serial_tasks import runs_one_task_at_a_time
from dagguard.model.unscheduled import never_scheduled
from dagguard.rules.base import UNSAFE, Fix, Report, Rule, RuleContext
from dagguard.rules.edits import add_dag_keyword_fix


class MissingMaxActiveTasks(Rule):
    code = "DG103"
    name = "missing-max-active-tasks"
    severity = "warning"
    fixable = True
    summary = "The DAG sets no max_active_tasks: up to 16 of its tasks may run at once"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        # Airflow 2 also accepted the old name `concurrency`; Airflow 3 rejects it (DG106).
        settings = context.settings
        old_name_counts = settings.airflow_version == "2"
        for dag in file.dags:
            if not dag.surely_lacks("max_active_tasks") or (old_name_counts and "concurrency" in dag.args):
                continue
            if never_scheduled(file, dag, context.path, context.settings.root):
                continue  # a SubDAG or a test's DAG: never scheduled by itself
            # One run at a time has no backlog to flood with: see DG102's page.
            if recurs_on_a_clock(dag, settings.airflow_version, settings.create_cron_data_intervals) \
                    and not _runs_one_task_at_a_time(file, dag):
                yield Report(
                    node=dag.report_node,
                    message=f"{dag.label} sets no max_active_tasks; up to 16 of its tasks can run at once",
                    help="set max_active_tasks to what its sources and targets can take",
                    dag=dag,
                    # With `concurrency=` passed, DG106's rename is the fix.
                    fix=None if "concurrency" in dag.args else _fix(dag, context.settings.fix_max_active_tasks),
                )


def _runs_one_task_at_a_time(file: FileModel, dag: DagModel) -> bool:
    """One run at a time (`max_active_runs=1` on the DAG: in default_args it is ignored) of one
    straight chain of tasks: no two tasks are ever ready at once, and no limit binds."""
    given = dag.args.get("max_active_runs")
    return given is not None and type(given.value) is int and given.value == 1 \
        and runs_one_task_at_a_time(file, dag)


def _fix(dag: DagModel, value: int) -> Optional[Fix]:
    """Bounding the DAG changes how many of its tasks may run at once: unsafe."""
    return add_dag_keyword_fix(dag, "max_active_tasks", cst.Integer(str(value)), UNSAFE)
