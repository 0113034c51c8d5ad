"""DG303: two operators with the same task_id in one DAG: Airflow refuses to load the DAG."""

from __future__ import annotations

from typing import Iterable, Iterator

import libcst as cst

from dagguard.model.branches import branch_paths, exclusive
from dagguard.model.dags import FileModel, TaskModel
from dagguard.model.scope import target_names
from dagguard.model.tree import child_nodes
from dagguard.rules.base import Report, Rule, RuleContext


class DuplicateTaskId(Rule):
    code = "DG303"
    name = "duplicate-task-id"
    severity = "error"
    summary = "Two tasks in one DAG share a task_id, so the DAG fails to import"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        for dag in file.dags:
            seen: dict[str, list[TaskModel]] = {}
            paths = None
            # TaskFlow calls get unique ids from Airflow (`extract__1`); only explicit ids clash.
            for task in dag.tasks:
                task_id = task.full_task_id
                if task.kind != "operator" or task_id is None:
                    continue
                task_arg = task.args.get("task_id")
                node = task_arg.report_node if task_arg else task.node
                earlier = seen.setdefault(task_id, [])
                if earlier and paths is None:  # walked for files with a repeated id only
                    paths = branch_paths(file.module, (t.node for t in dag.tasks))
                if earlier and any(not exclusive(paths[id(t.node)], paths[id(task.node)]) for t in earlier):
                    yield Report(
                        node=node,
                        message=f"{dag.label} already has a task '{task_id}'; "
                                "Airflow raises DuplicateTaskIdFound and the DAG does not load",
                        help="give each task a unique task_id",
                        dag=dag,
                    )
                elif _repeated_by_loop(task, task_arg.node if task_arg else None):
                    yield Report(
                        node=node,
                        message=f"{dag.label} creates task '{task_id}' on every pass of a loop; "
                                "the second pass raises DuplicateTaskIdFound and the DAG does not load",
                        help="build the task_id from the loop variable, e.g. f\"load_{table}\"",
                        dag=dag,
                    )
                earlier.append(task)


def _repeated_by_loop(task: TaskModel, task_id_node: cst.CSTNode | None) -> bool:
    """The task is made on each pass of a loop that can run twice, with an id the loop's
    variables do not change."""
    loop = task.loop
    if loop is None or task_id_node is None or _runs_at_most_once(loop):
        return False
    return not (_loop_targets(loop) & set(_names_in(task_id_node)))


def _runs_at_most_once(loop: cst.CSTNode) -> bool:
    # Visibly so: over a literal of at most one item, or range(0) / range(1).
    if isinstance(loop, cst.For):
        iterable = loop.iter
    else:
        comp = loop.for_in  # type: ignore[attr-defined]
        if comp.inner_for_in is not None:
            return False
        iterable = comp.iter
    if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)):
        return len(iterable.elements) <= 1
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
            and iterable.func.value == "range" and len(iterable.args) == 1:
        bound = iterable.args[0].value
        return isinstance(bound, cst.Integer) and int(bound.value, 0) <= 1
    return False


def _loop_targets(loop: cst.CSTNode) -> set[str]:
    if isinstance(loop, cst.For):
        return set(target_names(loop.target))
    names: set[str] = set()
    comp = loop.for_in  # type: ignore[attr-defined]
    while comp is not None:
        names.update(target_names(comp.target))
        comp = comp.inner_for_in
    return names


def _names_in(node: cst.CSTNode) -> Iterator[str]:
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, cst.Name):
            yield current.value
        else:
            pending.extend(child_nodes(current))
