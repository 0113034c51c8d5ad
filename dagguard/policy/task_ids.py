"""DG303 on a loaded DAG.

Two tasks given one task_id never reach the policy: Airflow raises DuplicateTaskIdFound while
the file is executed, and the file is an import error before any policy runs. What a loaded DAG
can still hold is a task whose `task_id` was changed after it was added (`task.task_id = ...`,
a factory renaming tasks), so that two tasks of the DAG answer to one id under different keys:
the scheduler and the UI then pick one of them by id.
"""

from __future__ import annotations

from typing import Any, Iterator

from dagguard.policy.findings import Finding
from dagguard.rules import messages


def task_id_findings(dag: Any, dag_label: str) -> Iterator[Finding]:
    """One DG303 finding per task whose id another task of the DAG already has."""
    seen: set[str] = set()
    for task in getattr(dag, "task_dict", {}).values():
        task_id = task.task_id
        if task_id in seen:
            yield Finding("DG303", messages.renamed_onto_task_id(dag_label, task_id), messages.DG303_HELP)
        seen.add(task_id)
