"""How often a clock read's value changes: on every parse, or once a day.

`pendulum.yesterday()`, `days_ago(1)`, `date.today()`, `datetime.combine(date.today(), ...)`
and `now().replace(hour=0, minute=0, second=0, microsecond=0)` give the same value all day and
move at midnight; `datetime.now()` and `time.time()` give a new one on every parse. DG104 and
DG108 say which, because the consequences differ.
"""

from __future__ import annotations

import libcst as cst

from dagguard.model.project.origins import path_to
from dagguard.model.basics.scope import Scope

DAILY_FUNCTIONS = frozenset({
    "pendulum.today", "pendulum.yesterday", "pendulum.tomorrow", "datetime.date.today",
    "airflow.utils.dates.days_ago", "pendulum.Date.today",
})
_COMBINE = frozenset({"datetime.datetime.combine", "pendulum.DateTime.combine"})
_DAY_FIELDS = ("hour", "minute", "second", "microsecond")


def moves_daily(call: cst.Call, value: cst.BaseExpression, scope: Scope) -> bool:
    """Is the clock read `call`, made when `value` is evaluated in `scope`, cut to a day, so that
    what `value` gets changes once a day rather than on every parse?"""
    found = path_to(value, call, scope)
    path, where = found if found is not None else ([], scope)
    if where.resolves_to(call.func, DAILY_FUNCTIONS):
        return True
    child: cst.CSTNode = call
    for parent in path:   # nearest first
        if type(parent) is cst.Call and _cuts_to_a_day(parent, child, where):
            return True
        if type(parent) is not cst.Attribute and type(parent) is not cst.Arg:   # `x.replace`, `f(x)`: still x
            child = parent
    return False


def _cuts_to_a_day(call: cst.Call, inner: cst.CSTNode, scope: Scope) -> bool:
    """`inner.date()`, `inner.start_of("day")`, `inner.replace(hour=0, minute=0, second=0,
    microsecond=0)` or `datetime.combine(inner, ...)`."""
    func = call.func
    if type(func) is cst.Attribute and func.value is inner:
        method = func.attr.value
        if method == "date" and not call.args:
            return True
        if method == "start_of" and len(call.args) == 1 and isinstance(call.args[0].value, cst.SimpleString):
            return call.args[0].value.value.strip("'\"") == "day"
        if method == "replace":
            given = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
            return all(isinstance(given.get(name), cst.Integer) for name in _DAY_FIELDS)
        return False
    return scope.resolves_to(func, _COMBINE) and bool(call.args) and call.args[0].value is inner
