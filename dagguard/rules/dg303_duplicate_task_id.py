"""DG303: two operators with the same task_id in one DAG: Airflow refuses to load the DAG."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags import FileModel
from dagguard.rules.base import Report, Rule, RuleContext


class DuplicateTaskId(Rule):
    code = "DG303"
    name = "duplicate-task-id"
    severity = "error"
    summary = "Two tasks in one DAG share a task_id, so the DAG fails to import"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        for dag in file.dags:
            seen: set[str] = set()
            # TaskFlow calls get unique ids from Airflow (`extract__1`); only explicit ids clash.
            for task in dag.tasks:
                task_id = task.full_task_id
                if task.kind != "operator" or task_id is None:
                    continue
                if task_id in seen:
                    task_arg = task.args.get("task_id")
                    yield Report(
                        node=task_arg.report_node if task_arg else task.node,
                        message=f"{dag.label} already has a task '{task_id}'; "
                                "Airflow raises DuplicateTaskIdFound and the DAG does not load",
                        help="give each task a unique task_id",
                        dag=dag,
                    )
                seen.add(task_id)
