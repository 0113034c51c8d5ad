"""Removed context keys read only as an Airflow 2 fallback behind their replacement.

`context.get("logical_date") or context.get("execution_date")` runs on Airflow 2 and 3: on
Airflow 3 the first operand holds the date, and the removed key's `.get()` returns None without
raising. Such a read is code written for both versions, not a bug to report.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, Optional

import libcst as cst

from dagguard.model.basics.context_keys import CONTEXT_KEYS, REMOVED_KEYS

# Keys that say the same as a removed key on Airflow 3, read from the replacement table DG205
# gives (`data_interval_end | ds` names two), plus data_interval_start for the logical date
# (equal on a data-interval timetable, the one kind Airflow 2 code assumed).
_EXTRA = {"execution_date": frozenset({"data_interval_start"})}


def replacement_keys(key: str) -> frozenset[str]:
    """The context keys Airflow 3 has in place of the removed `key`."""
    named = set(re.findall(r"[a-z_]+", REMOVED_KEYS.get(key, "")))
    return frozenset(k for k in named if k in CONTEXT_KEYS and k not in REMOVED_KEYS) | _EXTRA.get(key, frozenset())


# The key `node` reads when it is a lookup on a context name, else None.
LookupOf = Callable[[cst.CSTNode], Optional[str]]


def is_compat_fallback(node: cst.CSTNode, key: str, parents: dict[int, cst.CSTNode],
                       lookup_of: LookupOf, context_names: frozenset[str]) -> bool:
    """Is the removed-key read `node` (`ctx.get(key)` or `ctx[key]`) an Airflow 2 fallback that
    Airflow 3 never needs: a `.get()` after an `or` operand reading its replacement, the
    default of a `.get()` of its replacement, or a read guarded by `key in ctx` whose other
    branch reads the replacement?"""
    wanted = replacement_keys(key)
    if not wanted:
        return False
    is_get = isinstance(node, cst.Call)
    parent = parents.get(id(node))
    # `ctx.get("logical_date") or ctx.get("execution_date")`, maybe among more operands.
    child: cst.CSTNode = node
    while isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.Or):
        if parent.right is child and is_get and _reads_any(parent.left, wanted, lookup_of):
            return True
        child, parent = parent, parents.get(id(parent))
    # `ctx.get("logical_date", ctx.get("execution_date"))`: the default is evaluated, so only a
    # `.get()` is harmless there.
    parent = parents.get(id(node))
    if is_get and isinstance(parent, cst.Arg):
        call = parents.get(id(parent))
        if isinstance(call, cst.Call) and len(call.args) >= 2 and call.args[1] is parent \
                and lookup_of(call) in wanted:
            return True
    return _guarded(node, key, wanted, parents, lookup_of, context_names)


def _guarded(node: cst.CSTNode, key: str, wanted: frozenset[str], parents: dict[int, cst.CSTNode],
             lookup_of: LookupOf, context_names: frozenset[str]) -> bool:
    """`if "execution_date" in ctx: ... else: ...ctx["logical_date"]...` (or the same as a
    conditional expression), `node` inside the guarded branch."""
    child, parent = node, parents.get(id(node))
    while parent is not None and not isinstance(parent, cst.FunctionDef):
        if isinstance(parent, (cst.If, cst.IfExp)):
            guarded = parent.body is child
            if guarded and _tests_membership(parent.test, key, context_names):
                other = parent.orelse
                if other is not None and _reads_any(other, wanted, lookup_of):
                    return True
        child, parent = parent, parents.get(id(parent))
    return False


def _tests_membership(test: cst.BaseExpression, key: str, context_names: frozenset[str]) -> bool:
    """`"key" in ctx`, with `ctx` a name holding the context."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    target = test.comparisons[0]
    return (isinstance(target.operator, cst.In) and isinstance(test.left, cst.SimpleString)
            and test.left.evaluated_value == key and isinstance(target.comparator, cst.Name)
            and target.comparator.value in context_names)


def _reads_any(root: cst.CSTNode, wanted: frozenset[str], lookup_of: LookupOf) -> bool:
    """Does the code under `root` read one of the keys `wanted` from the context?"""
    return any(lookup_of(node) in wanted for node in _walk(root))


def _walk(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [root]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)
