"""DG303: two operators with the same task_id in one DAG: Airflow refuses to load the DAG."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from dagguard.model.dags.branches import branch_paths, exclusive
from dagguard.model.dags.models import DagModel, FileModel, TaskModel
from dagguard.model.dags.nesting import (COMPREHENSIONS, Condition, LoopPass, PrefixingGroup, changing_names,
                                    has_call, loop_passes, mentions)
from dagguard.model.basics.values import Evaluator, StaticDict
from dagguard.rules.base import Report, Rule, RuleContext
from dagguard.rules.messages import DG303_HELP, duplicate_task_id


class DuplicateTaskId(Rule):
    code = "DG303"
    name = "duplicate-task-id"
    severity = "error"
    summary = "Two tasks in one DAG share a task_id, so the DAG fails to import"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        changing: dict[int, Optional[frozenset[str]]] = {}  # per loop: a body is walked once
        for dag in file.dags:
            seen: dict[str, list[TaskModel]] = {}
            paths = None
            # TaskFlow calls get unique ids from Airflow (`extract__1`); only explicit ids clash.
            for task in dag.tasks:
                task_arg = task.args.get("task_id")
                if task.kind != "operator" or task_arg is None:
                    continue
                task_id = task.full_task_id
                earlier = seen.setdefault(task_id, []) if task_id is not None else []
                if earlier and paths is None:  # walked for files with a repeated id only
                    paths = branch_paths(file.module, (t.node for t in dag.tasks))
                if earlier and any(not exclusive(paths[id(t.node)], paths[id(task.node)]) for t in earlier):
                    yield Report(
                        node=task_arg.report_node,
                        message=duplicate_task_id(dag.label, task_id),
                        help=DG303_HELP,
                        dag=dag,
                    )
                elif (repeating := _repeating_pass(dag, task, task_arg.node, changing)) is not None:
                    shown = f"'{task_id}'" if task_id is not None else f"task_id={file.module.code_for_node(task_arg.node)}"
                    variables = ", ".join(sorted(repeating.targets)) or "_"
                    yield Report(
                        node=task_arg.report_node,
                        message=f"{dag.label} creates task {shown} on every pass of a loop over {variables}, "
                                "which the id does not depend on; the second pass raises DuplicateTaskIdFound "
                                "and the DAG does not load",
                        help=f"build the task_id from {variables} too, or put the tasks in a TaskGroup named after it",
                        dag=dag,
                    )
                if task_id is not None:
                    earlier.append(task)


def _repeating_pass(dag: DagModel, task: TaskModel, task_id_node: cst.BaseExpression,
                    known: dict[int, Optional[frozenset[str]]]) -> Optional[LoopPass]:
    """A loop around the task, inside its DAG, that can run twice and makes the same id on each
    pass: neither the id nor a prefixing task group inside the loop depends on what the loop
    changes, and no condition or early exit inside it may skip passes."""
    around_the_dag = {id(level) for level in dag.nesting}  # these make a new DAG on each pass
    for index, level in enumerate(task.nesting):
        if not isinstance(level, (cst.For, *COMPREHENSIONS)) or id(level) in around_the_dag:
            continue
        inner = task.nesting[index + 1:]
        ids = [task_id_node] + [g.group_id for g in inner if isinstance(g, PrefixingGroup)]
        conditions = [c.test for c in inner if isinstance(c, Condition)]
        for loop in loop_passes(level):
            if _runs_at_most_once(loop.iterable, Evaluator(task.scope)):
                continue
            if id(loop.node) not in known:
                known[id(loop.node)] = changing_names(loop)
            changing = known[id(loop.node)]
            if changing is None or any(mentions(test, changing) for test in (*conditions, *loop.conditions)):
                continue  # some passes may skip the task
            if any(mentions(expr, changing) or has_call(expr) for expr in ids):
                continue  # the id may differ from pass to pass
            return loop
    return None


def _runs_at_most_once(iterable: cst.BaseExpression, evaluator: Evaluator) -> bool:
    # Visibly so: over a literal (or a module constant) of at most one item, `range(0)` /
    # `range(1)`, a dict of at most one entry or its `.items()`/`.keys()`/`.values()`, or
    # `enumerate(...)` of one of these.
    if isinstance(iterable, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
        return len(iterable.elements) <= 1 and not any(
            isinstance(e, (cst.StarredElement, cst.StarredDictElement)) for e in iterable.elements)
    if isinstance(iterable, cst.Name):
        value = evaluator.value(iterable)
        if isinstance(value, StaticDict):
            return value.complete and len(value.entries) <= 1
        return isinstance(value, (list, tuple)) and len(value) <= 1
    if not isinstance(iterable, cst.Call):
        return False
    func = iterable.func
    if isinstance(func, cst.Attribute) and func.attr.value in _DICT_VIEWS and not iterable.args:
        return isinstance(func.value, (cst.Dict, cst.Name)) and _runs_at_most_once(func.value, evaluator)
    if not isinstance(func, cst.Name) or len(iterable.args) != 1 or evaluator.scope.lookup(func.value):
        return False  # a call of something else, or a local `range`/`enumerate`
    if func.value == "range":
        bound = iterable.args[0].value
        return isinstance(bound, cst.Integer) and int(bound.value, 0) <= 1
    return func.value == "enumerate" and iterable.args[0].keyword is None \
        and _runs_at_most_once(iterable.args[0].value, evaluator)


_DICT_VIEWS = frozenset({"items", "keys", "values"})
