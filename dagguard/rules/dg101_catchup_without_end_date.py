"""DG101: catchup on, no end_date, recurring schedule: every missed interval since start_date
is queued at once."""

from __future__ import annotations

import datetime as dt
from typing import Iterable, Optional

import libcst as cst

from dagguard.model.basics.arguments import ArgValue
from dagguard.model.dags.models import DagModel, FileModel
from dagguard.model.schedules.schedules import Recurrence, catching_up, count_runs, dag_date, surely_dateless
from dagguard.model.schedules.unscheduled import never_scheduled
from dagguard.rules.base import UNSAFE, Fix, Report, Rule, RuleContext
from dagguard.rules.edits import add_dag_keyword_fix
from dagguard.rules.ignored_default_args import noting_default_args
from dagguard.rules.messages import DG101_HELP, catchup_without_end_date


class CatchupWithoutEndDate(Rule):
    code = "DG101"
    name = "catchup-without-end-date"
    severity = "error"
    fixable = True
    summary = "Catchup is on with no end_date: the scheduler queues every interval since start_date"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        settings = context.settings
        for dag in file.dags:
            if never_scheduled(file, dag, context.path, context.settings.root):
                continue  # a SubDAG or a test's DAG: never scheduled by itself
            if not surely_dateless(dag, "end_date"):
                continue
            # Without a start date there is nothing to catch up from (and Airflow 3 rejects
            # catchup=True outright).
            if surely_dateless(dag, "start_date"):
                continue
            rec = catching_up(dag, settings.airflow_version, settings.create_cron_data_intervals)
            if rec is None:
                continue
            catchup = dag.args.get("catchup")
            yield Report(
                node=catchup.report_node if catchup is not None else dag.report_node,
                message=backlog_message(dag, rec, context.now),
                help=noting_default_args(DG101_HELP, dag, "catchup"),
                dag=dag, argument=catchup,
                fix=_fix(dag, catchup),
            )


def backlog_message(dag: DagModel, rec: Recurrence, now: dt.datetime) -> str:
    """The finding, with the backlog's size when start_date is static."""
    if not rec.fires_known:
        return catchup_without_end_date(dag.label, None, fires_known=False)
    start = dag_date(dag, "start_date")
    return catchup_without_end_date(dag.label, count_runs(rec, start, now) if start is not None else None)


def _fix(dag: DagModel, catchup: Optional[ArgValue]) -> Optional[Fix]:
    """catchup=False: the missed intervals are no longer run, so unsafe."""
    if catchup is None:
        if not dag.args.complete:
            return None
        return add_dag_keyword_fix(dag, "catchup", cst.Name("False"), UNSAFE)
    written = catchup.report_node
    # `catchup=True` written in the DAG's own call (or passed by the caller to its factory):
    # flip it there. A True the factory sets or defaults to is another file's (or every
    # caller's): the call gets catchup=False instead, if the factory takes it.
    if isinstance(written, cst.Arg) and written.value is catchup.node and isinstance(catchup.node, cst.Name) \
            and catchup.node.value == "True":
        return Fix("set catchup=False", UNSAFE, ((catchup.node, catchup.node.with_changes(value="False")),))
    if catchup.factory_default is not None:
        return add_dag_keyword_fix(dag, "catchup", cst.Name("False"), UNSAFE)
    return None
