"""Python expressions that build a string at run time: `"...".format(...)`, `"..." % x`,
`"..." + x`, f-strings, `"...".join(...)`. SQL built so is not static, yet it is SQL text
whose table may be any: a clear built this way may be the one that empties a target."""

from __future__ import annotations

import libcst as cst

from dagguard.model.basics.scope import Scope

_STRING_METHODS = frozenset({"format", "join", "replace", "strip", "lower", "upper", "format_map"})
_MAX_DEPTH = 4


def builds_text(node: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
    """Is `node` a string built at run time (directly, or through a name bound to one)?"""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(node, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Name):
        found = scope.constant(node.value)
        return found is not None and builds_text(found[0], found[1], depth + 1)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Modulo)):
        return builds_text(node.left, scope, depth + 1) or (
            isinstance(node.operator, cst.Add) and builds_text(node.right, scope, depth + 1))
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in _STRING_METHODS:
        return builds_text(node.func.value, scope, depth + 1)
    return False
