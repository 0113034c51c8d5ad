"""Is the class a task is made of an operator, and which of Airflow's operators it derives from.

BaseOperator rejects every keyword it does not know (`Invalid arguments were passed`), so an
argument that Airflow 3 removed from BaseOperator fails on any subclass: Airflow's, a
provider's, another package's or the project's own. A class counts as an operator when Airflow
ships it (by qualified name), when its bases reach one through this file's classes or the
project's modules, or, for a class of another package that cannot be read, when its name says
so (`...Operator`, `...Sensor`). A plain function, or a class that shows no sign of being an
operator, is not one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import libcst as cst

from dagguard.model.basics import airflow_names as names
from dagguard.model.basics.scope import ClassBinding, Scope
from dagguard.model.basics.tree import child_nodes
from dagguard.model.basics.values import simple_string_value

if TYPE_CHECKING:
    from dagguard.model.dags.models import TaskModel

MAX_BASES_DEPTH = 8     # class chains longer than this are not followed (and cycles stop here)
_OPERATOR_SUFFIXES = ("Operator", "Sensor")


@dataclass(frozen=True)
class OperatorClass:
    """What is known of a task's operator class."""

    name: str                        # the class name as called
    airflow_classes: frozenset[str]  # names of the Airflow operator classes it is or derives from
    # Names the project's own classes of the chain take themselves (an `__init__` parameter,
    # or a string in its body such as `kwargs.pop("task_concurrency")`): they may never reach
    # BaseOperator.
    own_names: frozenset[str] = frozenset()


def task_operator_class(task: "TaskModel") -> Optional[OperatorClass]:
    """The operator class of an operator task, or None when nothing says it is one."""
    if task.kind != "operator" or type(task.node) is not cst.Call:
        return None
    func = task.node.func  # type: ignore[attr-defined]
    if type(func) is cst.Attribute and func.attr.value == "partial":  # type: ignore[attr-defined]
        func = func.value  # type: ignore[attr-defined]
    return operator_class_of(func, task.scope)


def operator_class_of(expr: cst.BaseExpression, scope: Scope) -> Optional[OperatorClass]:
    """The operator class `expr` (a class's name, or a base in a class statement) names, or None."""
    return _class_of(expr, scope, 0)


def _class_of(expr: cst.BaseExpression, scope: Scope, depth: int) -> Optional[OperatorClass]:
    if depth > MAX_BASES_DEPTH:
        return None
    if type(expr) is cst.Name:
        binding = scope.single(expr.value)  # type: ignore[attr-defined]
        if type(binding) is ClassBinding:
            return _from_class(binding.node, _root(scope), depth)  # type: ignore[union-attr]
    qual = scope.qualname(expr)
    if qual is None:
        return None
    last = qual.rsplit(".", 1)[-1]
    if names.is_airflow_operator(qual):
        return OperatorClass(last, frozenset({last}))
    if qual.startswith("airflow."):
        return None   # a hook, a trigger, a utility: never a task
    link = scope.project_link()
    index = getattr(link, "index", None)
    if index is not None:
        found = index.resolve(qual, getattr(link, "path", None))
        if found is not None:
            if type(found.binding) is not ClassBinding:
                return None   # a project function or constant: not a class we can vouch for
            return _from_class(found.binding.node, found.module.scope, depth)  # type: ignore[union-attr]
    # A class of another package: its name is the only sign it is an operator.
    return OperatorClass(last, frozenset()) if last.endswith(_OPERATOR_SUFFIXES) else None


def _from_class(node: cst.ClassDef, scope: Scope, depth: int) -> Optional[OperatorClass]:
    """A class read from source: an operator when one of its bases is."""
    airflow_classes: set[str] = set()
    own = set(_own_names(node))
    operator = False
    for base in node.bases:
        if base.keyword is not None:
            continue   # metaclass=...
        found = _class_of(base.value, scope, depth + 1)
        if found is not None:
            operator = True
            airflow_classes |= found.airflow_classes
            own |= found.own_names
    if not operator:
        return None
    return OperatorClass(node.name.value, frozenset(airflow_classes), frozenset(own))


def _own_names(node: cst.ClassDef) -> set[str]:
    """Parameters of the class's `__init__`, and the strings in its body."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    found: set[str] = set()
    for stmt in body:
        if not (isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__"):
            continue
        params = stmt.params
        found.update(p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params))
        stack: list[cst.CSTNode] = [stmt.body]
        while stack:
            current = stack.pop()
            if type(current) is cst.SimpleString:
                value = simple_string_value(current)  # type: ignore[arg-type]
                if isinstance(value, str):
                    found.add(value)
            stack.extend(child_nodes(current))
    return found


def _root(scope: Scope) -> Scope:
    while scope.parent is not None:
        scope = scope.parent
    return scope.whole   # every binding of the module, wherever the task is made
