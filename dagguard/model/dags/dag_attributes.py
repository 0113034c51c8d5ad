"""DAG arguments set after the DAG is made: `dag = DAG(...)` then `dag.catchup = False`.

Airflow's DAG keeps these as plain attributes (Airflow 3.3.2's attrs class validates them on
assignment; `schedule` is frozen there and cannot be set), and the scheduler reads the DAG as
the file left it after it ran, so a later module-level assignment is the DAG's value. An
assignment that may or may not run (in an `if`, a loop, a `try`, a function) makes the value
unknown.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

import libcst as cst

from dagguard.model.basics.arguments import ArgValue
from dagguard.model.basics.scope import Scope
from dagguard.model.basics.values import UNKNOWN, Evaluator

if TYPE_CHECKING:
    from dagguard.model.dags.models import DagModel

# The arguments the schedule rules read that a DAG lets code set after construction, and that
# Airflow honours when it serialises the DAG.
SETTABLE = frozenset({"catchup", "max_active_runs", "max_active_tasks", "start_date", "end_date"})


def apply_attribute_assignments(module: cst.Module, scope: Scope, dags: Sequence["DagModel"]) -> None:
    """Give each DAG of `dags` bound to a module-level name the values later assigned to its
    SETTABLE attributes (straight-line module code, `with` blocks included), or UNKNOWN for an
    assignment elsewhere."""
    by_call = {id(dag.call): dag for dag in dags if dag.call is not None}
    if not by_call:
        return
    bound: dict[str, "DagModel"] = {}
    straight: set[int] = set()
    for index, stmt in enumerate(module.body):
        evaluator = Evaluator(scope.at(index), fstrings=True)
        for small in _straight_line(stmt, bound, by_call):
            straight.add(id(small))
            name, attr = _attribute_target(small)
            dag = bound.get(name) if name is not None else None
            if dag is not None and attr in SETTABLE:
                _set(dag, ArgValue(attr, small.value, evaluator.value(small.value), "attribute", small))
    if not bound:
        return
    # Assignments to a DAG's name elsewhere: in a branch, a loop or a function (maybe run).
    for node in _assignments(module):
        if id(node) not in straight:
            name, attr = _attribute_target(node)
            dag = bound.get(name) if name is not None else None
            if dag is not None and attr in SETTABLE:
                _set(dag, ArgValue(attr, node.value, UNKNOWN, "attribute", node))


def _straight_line(stmt: cst.CSTNode, bound: dict[str, "DagModel"],
                   by_call: dict[int, "DagModel"]) -> Iterator[cst.Assign]:
    """The attribute assignments that surely run, in order, keeping `bound` (name -> DAG)
    current: a name rebound to anything else is no longer the DAG."""
    if isinstance(stmt, cst.With):
        for item in stmt.items:
            dag = by_call.get(id(item.item))
            if item.asname is not None and isinstance(item.asname.name, cst.Name):
                _bind(bound, item.asname.name.value, dag)
        body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ()
        for inner in body:
            yield from _straight_line(inner, bound, by_call)
        return
    if not isinstance(stmt, cst.SimpleStatementLine):
        return
    for small in stmt.body:
        if not isinstance(small, cst.Assign):
            continue
        name, _ = _attribute_target(small)
        if name is not None:
            yield small
            continue
        dag = by_call.get(id(small.value))
        for target in small.targets:
            if isinstance(target.target, cst.Name):
                _bind(bound, target.target.value, dag)


def _bind(bound: dict[str, "DagModel"], name: str, dag: Optional["DagModel"]) -> None:
    if dag is None:
        bound.pop(name, None)
    else:
        bound[name] = dag


def _attribute_target(node: cst.Assign) -> tuple[Optional[str], Optional[str]]:
    """`NAME.attr = value` with one target: (NAME, attr), else (None, None)."""
    if len(node.targets) != 1:
        return None, None
    target = node.targets[0].target
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
        return target.value.value, target.attr.value
    return None, None


def _set(dag: "DagModel", value: ArgValue) -> None:
    dag.args = replace(dag.args, values={**dag.args.values, value.name: value})


# Statement containers: the walk for assignments goes through statements, not expressions.
_BLOCKS = (cst.BaseSuite, cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler,
           cst.Finally, cst.MatchCase)


def _assignments(root: cst.Module) -> Iterator[cst.Assign]:
    stack: list[cst.CSTNode] = list(root.body)
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from (small for small in current.body if isinstance(small, cst.Assign))
        elif isinstance(current, _BLOCKS):
            stack.extend(child for child in current.children
                         if isinstance(child, (*_BLOCKS, cst.SimpleStatementLine)))
