"""DAGs made to be another DAG's SubDAG (Airflow 2's `SubDagOperator(subdag=...)`): the parent's
task runs them, and the scheduler never schedules them by themselves, so what their own
schedule, catchup or run limits say does not matter.

A DAG of the file is one when a task's `subdag=` argument is its call (`subdag=DAG(...)`, a
factory's call, or a name bound to one of these), or calls a function of the file that makes
it (`subdag=load_subdag(...)`, following the function's `return other(...)` a few levels).
Without the call in sight (a factory module whose callers are elsewhere), a DAG made inside a
function with the SubDAG convention's id, `f"{parent}.{child}"` from what the caller passes,
counts too.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

import libcst as cst

from dagguard.model.dags.models import DagModel, FileModel
from dagguard.model.basics.scope import ConstantBinding, FunctionBinding, Scope, function_scope
from dagguard.model.basics.tree import child_nodes
from dagguard.model.basics.values import UNKNOWN, Evaluator

_KEY = "subdag_dags"
_FORMAT_PARENT_DOT = re.compile(r"\{[^{}]*\}\.")   # "{}.{}", "{0}.{1}", "{parent}.{child}"
MAX_DEPTH = 4


def is_subdag(file: FileModel, dag: DagModel) -> bool:
    """Is the DAG made to be run by a parent DAG's SubDagOperator, never scheduled itself?"""
    found: Optional[frozenset[int]] = file.analyses.get(_KEY)
    if found is None:
        found = file.analyses[_KEY] = _subdags(file)
    return id(dag.report_node) in found or _named_like_a_subdag(dag)


def _subdags(file: FileModel) -> frozenset[int]:
    """The DAGs (by their report node) that some task of the file takes as its `subdag=`."""
    # A DAG by the call that makes it: DAG(...), a factory's call, or an @dag function's body.
    made_by = {id(dag.call): id(dag.report_node) for dag in file.dags if dag.call is not None}
    made_by.update((id(dag.function), id(dag.report_node)) for dag in file.dags
                   if dag.kind == "decorator" and dag.function is not None)
    found: set[int] = set()
    for task in file.every_task():
        given = task.args.get("subdag")
        if given is not None:
            found |= _dags_made(given.node, task.scope, made_by, 0)
    return frozenset(found)


def _dags_made(expr: cst.BaseExpression, scope: Scope, made_by: dict[int, int], depth: int) -> set[int]:
    """The DAGs `expr` may evaluate to: its call, through names bound once, and through the
    bodies of the file's functions it calls."""
    if depth > MAX_DEPTH:
        return set()
    if isinstance(expr, cst.Name):
        binding = scope.single(expr.value)
        if isinstance(binding, ConstantBinding):
            return _dags_made(binding.value, scope, made_by, depth + 1)
        return set()
    if not isinstance(expr, cst.Call):
        return set()
    # The DAG(...) call, or a factory's call (the model makes a DAG at the call when the
    # factory is called outside a DAG's body), and the DAGs the factory's body makes.
    found = {made_by[id(expr)]} if id(expr) in made_by else set()
    binding = scope.single(expr.func.value) if isinstance(expr.func, cst.Name) else None
    if not isinstance(binding, FunctionBinding):
        return found
    if id(binding.node) in made_by:
        return found | {made_by[id(binding.node)]}  # an @dag function's call
    inner = function_scope(binding.node, scope)
    pending: list[cst.CSTNode] = [binding.node.body]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Call) and id(node) in made_by:
            found.add(made_by[id(node)])
        elif isinstance(node, cst.Return) and node.value is not None:
            found |= _dags_made(node.value, inner, made_by, depth + 1)
        pending.extend(child_nodes(node))
    return found


def _named_like_a_subdag(dag: DagModel) -> bool:
    """A DAG made inside a function whose id is `<what the caller gives>.<child>`: Airflow 2
    requires a SubDAG's id to be its parent's id, a dot and the SubDagOperator's task_id."""
    given = dag.args.get("dag_id")
    if dag.scope.parent is None or given is None or given.value is not UNKNOWN:
        return False  # made at module level, or with an id that is not built from the call
    return _parent_dot_child(given.node, Evaluator(dag.scope))


def _parent_dot_child(node: cst.BaseExpression, evaluator: Evaluator) -> bool:
    """f"{parent}.{child}", parent + "." + child, "%s.%s" % (...), "{0}.{1}".format(...),
    ".".join([...]), with the part before the dot not statically known."""
    if isinstance(node, cst.FormattedString):
        parts = node.parts
        return any(isinstance(before, cst.FormattedStringExpression) and isinstance(after, cst.FormattedStringText)
                   and after.value.startswith(".") and evaluator.value(before.expression) is UNKNOWN
                   and (len(after.value) > 1 or index + 2 < len(parts))
                   for index, (before, after) in enumerate(zip(parts, parts[1:])))
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        terms = _added_terms(node)
        return any(evaluator.value(before) is UNKNOWN and isinstance(dot, cst.SimpleString)
                   and str(evaluator.value(dot)).startswith(".")
                   for before, dot in zip(terms, terms[1:]))
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        pattern = evaluator.value(node.left)
        values = node.right.elements if isinstance(node.right, cst.Tuple) else ()
        return isinstance(pattern, str) and pattern.startswith("%s.") and _unknown_first(values, evaluator)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and isinstance(node.func.value, cst.SimpleString) and len(node.args) >= 1:
        text = evaluator.value(node.func.value)
        method = node.func.attr.value
        if method == "format":
            return isinstance(text, str) and _FORMAT_PARENT_DOT.match(text) is not None \
                and _unknown_first(node.args, evaluator)
        joined = node.args[0].value
        return method == "join" and text == "." and isinstance(joined, (cst.List, cst.Tuple)) \
            and _unknown_first(joined.elements, evaluator)
    return False


def _unknown_first(items: Sequence[cst.Arg | cst.BaseElement], evaluator: Evaluator) -> bool:
    """Is the first of these values (the parent's id) not statically known?"""
    return bool(items) and not isinstance(items[0], cst.StarredElement) \
        and evaluator.value(items[0].value) is UNKNOWN


def _added_terms(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _added_terms(node.left) + _added_terms(node.right)
    return [node]
