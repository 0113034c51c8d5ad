"""DG208: a task of a partitioned DAG reads the run's data interval or logical date, which its
runs do not have."""

from __future__ import annotations

from typing import Iterable, Iterator

import libcst as cst

from dagguard.model.basics.context_keys import DATELESS_KEYS
from dagguard.model.dags.models import FileModel
from dagguard.model.schedules.partitions import dag_partition_schedule
from dagguard.model.tasks.task_io import TaskIO, task_io
from dagguard.rules.base import Report, Rule, RuleContext

HELP = ('read the run\'s partition instead: {{ partition_key }} in templates, context["partition_key"] '
        'or context["partition_date"] (the partition\'s start) in code')


class DataIntervalOnPartitionedDag(Rule):
    code = "DG208"
    name = "data-interval-on-partitioned-dag"
    severity = "error"
    summary = "A task of a partitioned DAG reads data_interval_*/logical_date/ds, which its runs lack"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        for dag in file.dags:
            schedule = dag_partition_schedule(file, dag)
            if schedule is None:
                continue
            for task in dag.tasks:
                io = task_io(file, dag, task, context.path)
                reads = list(_reads(io))
                if not reads:
                    continue
                node, _, consequence = reads[0]
                keys = list(dict.fromkeys(shown for _, shown, _ in reads))
                yield Report(
                    node=node,
                    message=f"{io.label} reads {_listed(keys)}, but {dag.label} is scheduled {schedule.timetable}, "
                            f"whose runs carry a partition key and no data interval or logical date; {consequence}",
                    help=HELP,
                    dag=dag,
                )


def _reads(io: TaskIO) -> Iterator[tuple[cst.CSTNode, str, str]]:
    """(where, what is read as shown, what happens at run time), templates first."""
    for string in io.strings:
        for key in sorted(string.template.roots & DATELESS_KEYS):
            yield string.node, f"{{{{ {key} }}}}", "the template fails to render (UndefinedError) in every run"
    for sql in io.sql:
        if sql.template is not None:
            for key in sorted(sql.template.roots & DATELESS_KEYS):
                yield sql.node, f"{{{{ {key} }}}}", "the template fails to render (UndefinedError) in every run"
    if io.callable is None:
        return
    for lookup in io.callable.dateless_reads:
        yield lookup.node, _shown(lookup.node, lookup.key), _consequence(lookup.node)


def _shown(node: cst.CSTNode, key: str) -> str:
    if isinstance(node, cst.Param):
        return f"the parameter {key}"
    if "." in key:
        return key
    return f'context["{key}"]'


def _consequence(node: cst.CSTNode) -> str:
    if isinstance(node, cst.Subscript):
        return "the lookup raises KeyError in every run"
    if isinstance(node, cst.Param):
        return "the value is its default (None) in every run"
    return "the value is None in every run"


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" and {items[-1]}"

