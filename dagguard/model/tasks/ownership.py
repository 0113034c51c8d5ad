"""Which DAG a node of the file belongs to: the regions of code each DAG owns, so that a finding
about a task or a line inside a DAG can name it without every rule saying so."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from dagguard.model.dags.models import DagModel, FileModel
from dagguard.model.tasks.python_tasks import MAX_HELPER_DEPTH, called_helper
from dagguard.model.basics.scope import Scope
from dagguard.model.basics.tree import child_nodes


def dag_regions(file: FileModel) -> dict[int, Optional[DagModel]]:
    """Nodes (by id) whose subtree belongs to one DAG: its call, its `with` bodies or @dag
    function, and each of its tasks' call and callable, with the same-file helpers the callable
    calls (as far as the callable's analysis follows them). None marks a node two DAGs share
    (a callable or helper used by both): a finding there belongs to neither alone."""
    regions: dict[int, Optional[DagModel]] = {}

    def claim(node: object, dag: DagModel) -> None:
        if node is None:
            return
        key = id(node)
        regions[key] = dag if regions.get(key, dag) is dag else None

    for dag in file.dags:
        claim(dag.call, dag)
        claim(dag.report_node, dag)
        for body in dag.bodies:
            claim(body, dag)
        for task in dag.tasks:
            claim(task.node, dag)
            claim(task.callable, dag)
            helpers = set(_helpers(task.node, task.scope, 0))  # `op_kwargs={"since": lookback()}`
            if task.callable is not None and task.callable_scope is not None:
                helpers.update(_helpers(task.callable.body, task.callable_scope, 0))
            for helper in helpers:
                claim(helper, dag)
    return regions


def _helpers(root: cst.CSTNode, scope: Scope, depth: int) -> Iterator[cst.FunctionDef]:
    """Same-file functions called by name under `root`, and the ones they call, to
    MAX_HELPER_DEPTH."""
    if depth >= MAX_HELPER_DEPTH:
        return
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            found = called_helper(node, scope)
            if found is not None:
                yield found[0]
                yield from _helpers(found[0].body, found[1], depth + 1)
        stack.extend(child_nodes(node))
