"""DG106: DAG arguments Airflow 3 rejects with TypeError (or silently ignores)."""

from __future__ import annotations

from typing import Iterable, Optional

from dagguard.model.basics.arguments import ArgValue
from dagguard.model.dags.models import ASSET_DECORATOR_ARGUMENTS, DagModel, FileModel
from dagguard.rules.base import UNSAFE, Fix, Report, Rule, RuleContext
from dagguard.rules.edits import forwarded_keyword, remove_argument, rename_fix

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
# The mechanical renames: the same value under Airflow 3's name.
RENAMED = {"schedule_interval": "schedule", "timetable": "schedule", "concurrency": "max_active_tasks",
           "fail_stop": "fail_fast"}


class RemovedDagArgument(Rule):
    code = "DG106"
    name = "removed-dag-argument"
    severity = "error"
    summary = "The DAG passes an argument Airflow 3 rejects (TypeError) or ignores"
    fixable = True

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        severity = "warning" if context.settings.airflow_version == "2" else "error"
        for dag in file.dags:
            written = dag.asset_arguments if dag.asset_arguments is not None else dag.args
            for name, arg in written.values.items():
                if arg.factory_keyword is not None:
                    # `DAG(schedule_interval=schedule_interval)` in a project factory: reported
                    # (and fixed) at that call, in the factory's file, not at each of its callers.
                    continue
                if name in REMOVED:
                    yield Report(
                        node=arg.report_node,
                        message=f"{dag.label} passes {name}, which Airflow 3 rejects with a TypeError",
                        help=REMOVED[name],
                        dag=dag,
                        severity=severity,
                        fix=_rename(dag, name, arg),
                    )
                elif dag.asset_decorator is not None and name not in ASSET_DECORATOR_ARGUMENTS[dag.asset_decorator]:
                    yield Report(
                        node=arg.report_node,
                        message=f"{dag.label} ({dag.asset_decorator}) passes {name}, which {dag.asset_decorator} "
                                "does not take; the file fails to load with TypeError",
                        help=f"remove it: an {dag.asset_decorator} DAG takes only "
                             f"{', '.join(sorted(ASSET_DECORATOR_ARGUMENTS[dag.asset_decorator]))}",
                        dag=dag,
                        severity=severity,
                        fix=_drop(dag, name, arg),
                    )
                elif name in IGNORED:
                    yield Report(
                        node=arg.report_node,
                        message=f"{dag.label} passes {name}, which Airflow 3 accepts but never calls",
                        help=IGNORED[name],
                        dag=dag,
                        severity="warning",
                        fix=_drop(dag, name, arg),
                    )


def _rename(dag: DagModel, name: str, arg: ArgValue) -> Optional[Fix]:
    """Airflow 3's name for the same value, unless that name is passed too (or may be)."""
    new_name = RENAMED.get(name)
    if new_name == "schedule" and any(n in dag.args for n in RENAMED if RENAMED[n] == "schedule" and n != name):
        return None
    if new_name is not None and dag.keyword_for(new_name) != new_name:
        return None   # a factory that would not pass the new name on to DAG()
    return rename_fix(dag.args, name, forwarded_keyword(dag, arg), new_name)


def _drop(dag: DagModel, name: str, arg: ArgValue) -> Optional[Fix]:
    """Airflow 3 never calls it; dropping it loses what it did on Airflow 2."""
    written = forwarded_keyword(dag, arg)
    if written is None or dag.call is None:
        return None
    return Fix(f"remove {name}=", UNSAFE, remove_argument(dag.call, written))
