"""`if __name__ == "__main__":` and `if TYPE_CHECKING:`: tests whose value is known when the
DAG processor imports the file, so one of their branches never runs there."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from dagguard.model.basics.scope import Scope
from dagguard.model.basics.values import simple_string_value

TYPE_CHECKING_NAMES = frozenset({"typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"})
# The DAG processor imports a DAG file under a module name of its own, never "__main__".
_MAIN = "__main__"


def value_on_import(test: cst.BaseExpression, scope: Scope) -> Optional[bool]:
    """The truth value of an `if` test when the file is imported as a DAG file; None when it
    is not one of these guards."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = value_on_import(test.expression, scope)
        return None if inner is None else not inner
    if scope.resolves_to(test, TYPE_CHECKING_NAMES):
        return False
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        if isinstance(comparison.operator, (cst.Equal, cst.NotEqual)) \
                and _is_main_check(test.left, comparison.comparator, scope):
            return isinstance(comparison.operator, cst.NotEqual)
    return None


def _is_main_check(left: cst.BaseExpression, right: cst.BaseExpression, scope: Scope) -> bool:
    """`__name__` compared with "__main__", either way round."""
    return (_is_dunder_name(left, scope) and _is_main_string(right)) \
        or (_is_dunder_name(right, scope) and _is_main_string(left))


def _is_dunder_name(expr: cst.BaseExpression, scope: Scope) -> bool:
    # The module global Python sets, unless the file binds it itself.
    return isinstance(expr, cst.Name) and expr.value == "__name__" and not scope.lookup("__name__")


def _is_main_string(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.SimpleString) and simple_string_value(expr) == _MAIN
