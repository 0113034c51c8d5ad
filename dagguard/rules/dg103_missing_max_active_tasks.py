"""DG103: no max_active_tasks, so up to 16 of the DAG's tasks run at once across its runs."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from dagguard.model.dags.models import DagModel, FileModel
from dagguard.model.schedules.schedules import recurs_on_a_clock
from dagguard.model.dags.serial_tasks import concurrent_task_bound
from dagguard.model.schedules.unscheduled import never_scheduled
from dagguard.rules.base import UNSAFE, Fix, Report, Rule, RuleContext
from dagguard.rules.edits import add_dag_keyword_fix
from dagguard.rules.ignored_default_args import noting_default_args
from dagguard.rules.messages import DG103_HELP, missing_max_active_tasks

AIRFLOW_DEFAULT = 16   # [core] max_active_tasks_per_dag


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
            if not dag.accepts("max_active_tasks"):
                continue  # an @asset DAG: Airflow gives it no way to set one
            if not dag.surely_lacks("max_active_tasks") or (old_name_counts and "concurrency" in dag.args):
                continue
            if never_scheduled(file, dag, context.path, context.settings.root):
                continue  # a SubDAG or a test's DAG: never scheduled by itself
            # One run at a time has no backlog to flood with: see DG102's page.
            if not recurs_on_a_clock(dag, settings.airflow_version, settings.create_cron_data_intervals):
                continue
            bound = _one_run_bound(file, dag)
            if bound is not None and bound <= settings.fix_max_active_tasks:
                continue  # the limit the fix would set could never bind
            at_once = min(bound, AIRFLOW_DEFAULT) if bound is not None else AIRFLOW_DEFAULT
            yield Report(
                node=dag.report_node,
                message=missing_max_active_tasks(dag.label, at_once),
                help=noting_default_args(DG103_HELP, dag,
                                         "max_active_tasks", *(("concurrency",) if old_name_counts else ())),
                dag=dag,
                # With `concurrency=` passed, DG106's rename is the fix.
                fix=None if "concurrency" in dag.args else _fix(dag, context.settings.fix_max_active_tasks),
            )


def _one_run_bound(file: FileModel, dag: DagModel) -> Optional[int]:
    """With one run at a time (`max_active_runs=1` on the DAG: in default_args it is ignored),
    the most tasks that can run at once when the linter can prove it: the widest set of tasks
    none of which depends on another (1 for a straight chain). None otherwise."""
    given = dag.args.get("max_active_runs")
    if given is None or type(given.value) is not int or given.value != 1:
        return None
    return concurrent_task_bound(file, dag)


def _fix(dag: DagModel, value: int) -> Optional[Fix]:
    """Bounding the DAG changes how many of its tasks may run at once: unsafe."""
    return add_dag_keyword_fix(dag, "max_active_tasks", cst.Integer(str(value)), UNSAFE)
