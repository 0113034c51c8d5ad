"""The passes of a `for` loop when the file says them: the values its target takes on each pass
(`for db, chain in CHAINS.items():` over a module constant), and the `if` tests inside it that
those values decide (`if chain == "eth":`). model/dags/serial_tasks.py walks such a loop once per pass,
so a task made under `if` on exactly one pass is made once.

A loop is only unrolled when nothing in its body can cut a pass short or change the target:
no `break`, `continue`, `return` or `raise`, and no assignment to a target name.
"""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from dagguard.model.basics.scope import Scope
from dagguard.model.basics.tree import child_nodes
from dagguard.model.basics.values import UNKNOWN, StaticDict, Evaluator

Bindings = dict[str, Any]
MAX_PASSES = 32          # a longer loop is read as "many times", as before
_DICT_VIEWS = frozenset({"items", "keys", "values"})
_CUTS = (cst.Break, cst.Continue, cst.Return, cst.Raise)
_OWN_BODY = (cst.FunctionDef, cst.Lambda, cst.ClassDef)   # their statements run elsewhere, if at all


def loop_passes(loop: cst.For, scope: Scope, bindings: Bindings) -> Optional[list[Bindings]]:
    """The target's names on each pass, in order, or None when the passes are not known."""
    if loop.asynchronous is not None:
        return None
    targets = _target_names(loop.target)
    if targets is None:
        return None
    items = _iterated(loop.iter, scope, bindings)
    if items is None or len(items) > MAX_PASSES or _may_cut_or_rebind(loop.body, set(targets)):
        return None
    passes: list[Bindings] = []
    for item in items:
        bound = dict(bindings)
        bound.update(_unpack(loop.target, item))
        passes.append(bound)
    return passes


def decided_by_pass(test: cst.BaseExpression, scope: Scope, bindings: Bindings) -> Optional[bool]:
    """The truth of an `if` test that the loop's values decide; None when they do not."""
    if not bindings:
        return None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = decided_by_pass(test.expression, scope, bindings)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left, right = decided_by_pass(test.left, scope, bindings), decided_by_pass(test.right, scope, bindings)
        if isinstance(test.operator, cst.And):
            return False if False in (left, right) else (None if None in (left, right) else True)
        return True if True in (left, right) else (None if None in (left, right) else False)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        left = _value(test.left, scope, bindings)
        right = _value(test.comparisons[0].comparator, scope, bindings)
        if left is UNKNOWN or right is UNKNOWN:
            return None
        return _compare(test.comparisons[0].operator, left, right)
    if isinstance(test, cst.Name) and test.value in bindings:
        value = bindings[test.value]
        return None if value is UNKNOWN else bool(value)
    return None


def _compare(operator: cst.BaseCompOp, left: Any, right: Any) -> Optional[bool]:
    try:
        if isinstance(operator, cst.Equal):
            return bool(left == right)
        if isinstance(operator, cst.NotEqual):
            return bool(left != right)
        if isinstance(operator, (cst.In, cst.NotIn)) and isinstance(right, (str, list, tuple, set, frozenset)):
            if isinstance(right, (list, tuple)) and UNKNOWN in right:
                return None
            found = left in right
            return found if isinstance(operator, cst.In) else not found
        if isinstance(operator, (cst.Is, cst.IsNot)) and (left is None or right is None):
            same = left is right
            return same if isinstance(operator, cst.Is) else not same
    except TypeError:   # `1 in "a"`: Python would raise; the linter does not guess
        return None
    return None


def _value(expr: cst.BaseExpression, scope: Scope, bindings: Bindings) -> Any:
    if isinstance(expr, cst.Name) and expr.value in bindings:
        return bindings[expr.value]
    if isinstance(expr, (cst.Name, cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float,
                         cst.List, cst.Tuple, cst.Set, cst.UnaryOperation)):
        return Evaluator(scope).value(expr)
    return UNKNOWN


def _iterated(expr: cst.BaseExpression, scope: Scope, bindings: Bindings) -> Optional[list[Any]]:
    """The items `for` takes from `expr`: a list, tuple or dict of known length (a literal or a
    constant naming one), a dict's `.items()`/`.keys()`/`.values()`, `range(n)`."""
    if isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value in _DICT_VIEWS:
        whole = _known(expr.func.value, scope, bindings)
        if not isinstance(whole, StaticDict) or not whole.complete:
            return None
        view = expr.func.attr.value
        if view == "keys":
            return list(whole.entries)
        values = [entry.value for entry in whole.entries.values()]
        return values if view == "values" else list(zip(whole.entries, values))
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "range" \
            and not scope.lookup("range") and 1 <= len(expr.args) <= 3 and not any(a.keyword or a.star for a in expr.args):
        bounds = [_known(a.value, scope, bindings) for a in expr.args]
        if all(type(b) is int for b in bounds) and len(range(*bounds)) <= MAX_PASSES:
            return list(range(*bounds))
        return None
    whole = _known(expr, scope, bindings)
    if isinstance(whole, StaticDict):
        return list(whole.entries) if whole.complete else None
    if isinstance(whole, (list, tuple)):
        return list(whole)
    return None


def _known(expr: cst.BaseExpression, scope: Scope, bindings: Bindings) -> Any:
    if isinstance(expr, cst.Name) and expr.value in bindings:
        return bindings[expr.value]
    return Evaluator(scope).value(expr)


def _target_names(target: cst.BaseAssignTargetExpression) -> Optional[list[str]]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        found: list[str] = []
        for element in target.elements:
            if isinstance(element, cst.StarredElement):
                return None
            inner = _target_names(element.value)  # type: ignore[arg-type]
            if inner is None:
                return None
            found.extend(inner)
        return found
    return None   # `for self.x in ...`, `for d["k"] in ...`


def _unpack(target: cst.BaseAssignTargetExpression, item: Any) -> Bindings:
    if isinstance(target, cst.Name):
        return {target.value: item}
    elements = target.elements  # type: ignore[attr-defined]
    if not isinstance(item, (list, tuple)) or len(item) != len(elements):
        item = [UNKNOWN] * len(elements)   # Python would raise here; the names stay unknown
    bound: Bindings = {}
    for element, value in zip(elements, item):
        bound.update(_unpack(element.value, value))
    return bound


def _may_cut_or_rebind(body: cst.CSTNode, targets: set[str]) -> bool:
    """Can a pass end early, or a target name be assigned in the body?"""
    pending: list[cst.CSTNode] = [body]
    while pending:
        node = pending.pop()
        if isinstance(node, _CUTS):
            return True
        if isinstance(node, _OWN_BODY):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value in targets:
                return True
            continue
        if _assigns(node, targets):
            return True
        pending.extend(child_nodes(node))
    return False


def _assigns(node: cst.CSTNode, targets: set[str]) -> bool:
    if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
        return bool(targets.intersection(_bound_names(node.target)))
    if isinstance(node, cst.AsName):
        return bool(targets.intersection(_bound_names(node.name)))
    return False


def _bound_names(target: cst.CSTNode) -> list[str]:
    """The names an assignment to `target` rebinds (`d["k"] = v` and `obj.x = v` rebind none)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _bound_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    return []
