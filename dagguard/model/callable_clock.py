"""Does a wall-clock value a task callable reads reach anything that matters? Followed through
local names, arithmetic, f-strings and value-preserving calls; logging, comparisons and bare
expressions are harmless (a timeout loop, a duration in a log line)."""

from __future__ import annotations

from typing import Union

import libcst as cst

from dagguard.model.callable_tree import CallableTree
from dagguard.model.values import OTHER_CLOCK_FUNCTIONS, WALL_CLOCK_FUNCTIONS

CLOCK_FUNCTIONS = (WALL_CLOCK_FUNCTIONS - {"airflow.utils.dates.days_ago"}) | OTHER_CLOCK_FUNCTIONS | frozenset({
    "airflow.utils.timezone.datetime.now",
})
_TRANSFORMS = frozenset({
    "str", "int", "float", "round", "abs", "repr", "datetime.datetime.fromtimestamp",
    "datetime.datetime.utcfromtimestamp", "pendulum.from_timestamp", "pendulum.instance",
})
_PASSED_UP = (cst.BinaryOperation, cst.UnaryOperation, cst.FormattedStringExpression, cst.FormattedString,
              cst.ConcatenatedString, cst.BooleanOperation, cst.IfExp)


def escapes(tree: CallableTree, call: cst.Call) -> bool:
    """Does the clock value `call` returns reach anything but logging, comparisons and local names?"""
    pending: list[cst.CSTNode] = [call]
    tainted: set[str] = set()
    while pending:
        node = pending.pop()
        outcome = _follow(tree, node)
        if outcome is True:
            return True
        if isinstance(outcome, str) and outcome not in tainted:
            tainted.add(outcome)
            pending.extend(tree.uses(outcome))
    return False


def _follow(tree: CallableTree, node: cst.CSTNode) -> Union[bool, str]:
    """Walk up from a value: True when it escapes, a name when bound to it, False when harmless."""
    current = node
    while True:
        parent = tree.parents.get(id(current))
        if parent is None:
            return False
        if isinstance(parent, _PASSED_UP):
            current = parent
        elif isinstance(parent, cst.Attribute) and parent.value is current:
            current = parent
        elif isinstance(parent, cst.Call) and parent.func is current:
            current = parent
        elif isinstance(parent, cst.Arg):
            call = tree.parents.get(id(parent))
            if not isinstance(call, cst.Call):
                return True
            if tree.is_logging(call):
                return False
            if tree.scope.qualname(call.func) in _TRANSFORMS or (
                    isinstance(call.func, cst.Name) and call.func.value in _TRANSFORMS):
                current = call
            else:
                return True
        elif isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.Expr)):
            return False
        elif isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            target = parent.targets[0].target if isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
                else getattr(parent, "target", None)
            return target.value if isinstance(target, cst.Name) else True
        else:
            return True
