"""Static evaluation of expressions: literals, module constants and a few well-known
constructors (datetime, timedelta, timetables). Anything else is UNKNOWN, never guessed."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Callable, Container, Optional

import libcst as cst

from dagguard.model.basics import airflow_names as names
from dagguard.model.basics.scope import FunctionBinding, Scope, ValueBinding, function_scope
from dagguard.model.basics.static_values import MAX_DEPTH, UNKNOWN, DictEntry, StaticDict
from dagguard.model.basics.tree import child_nodes


@dataclass(frozen=True)
class Timetable:
    """A timetable constructor call: `kind` is "trigger" or "data_interval"."""

    kind: str
    cron: Optional[str]
    delta: Optional[dt.timedelta]
    has_interval: bool
    qualname: str


@dataclass(frozen=True)
class AssetSchedule:
    """A schedule made of assets/datasets: runs are triggered by data, not the clock."""


DATETIME_CONSTRUCTORS = frozenset({
    "datetime.datetime", "pendulum.datetime", "pendulum.DateTime",
    "airflow.utils.timezone.datetime", "airflow.sdk.timezone.datetime",
})
TIMEDELTA_CONSTRUCTORS = frozenset({
    "datetime.timedelta", "pendulum.duration", "pendulum.Duration",
})
DICT_CONSTRUCTORS = frozenset({"dict"})
WALL_CLOCK_FUNCTIONS = frozenset({
    "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
    "datetime.date.today", "pendulum.now", "pendulum.today", "pendulum.yesterday",
    "pendulum.tomorrow", "pendulum.DateTime.now", "pendulum.DateTime.utcnow",
    "pendulum.DateTime.today", "airflow.utils.timezone.utcnow", "airflow.sdk.timezone.utcnow",
    "airflow.utils.dates.days_ago", "time.time",
})
# Calls whose value differs from one parse of the file to the next, beyond the clock: random
# numbers and fresh ids (the family Airflow 3.2's own [dag_processor]
# dag_version_inflation_check_level looks for).
# More clock reads, which the task-code rules (DG202) and DG108 count beside WALL_CLOCK_FUNCTIONS.
OTHER_CLOCK_FUNCTIONS = frozenset({
    "time.time_ns", "pendulum.utcnow", "airflow.utils.timezone.now", "airflow.sdk.timezone.now",
})
_VARYING_FUNCTIONS = WALL_CLOCK_FUNCTIONS | OTHER_CLOCK_FUNCTIONS | frozenset({
    "uuid.uuid1", "uuid.uuid4", "os.urandom",
})
_VARYING_MODULES = ("random.", "secrets.", "numpy.random.")
# Seeded or stateful constructors of those modules: the same value on every parse.
_STEADY_FUNCTIONS = frozenset({"random.Random", "random.seed", "random.getstate", "random.setstate",
                               "numpy.random.seed", "numpy.random.default_rng", "numpy.random.RandomState"})
CallTest = Callable[[cst.Call, Scope], bool]
_CONSTRUCTORS = (DICT_CONSTRUCTORS | DATETIME_CONSTRUCTORS | TIMEDELTA_CONSTRUCTORS | names.TRIGGER_TIMETABLES
                 | names.DATA_INTERVAL_TIMETABLES | names.ASSET_CLASSES)


def reads_clock(call: cst.Call, scope: Scope) -> bool:
    """Does the call read the wall clock?"""
    return scope.resolves_to(call.func, WALL_CLOCK_FUNCTIONS)


def varies_per_parse(call: cst.Call, scope: Scope) -> bool:
    """Does the call give another value each time the file is parsed (clock, random, uuid)?"""
    quals = scope.qualnames(call.func)
    return bool(quals) and all(
        q in _VARYING_FUNCTIONS or (q.startswith(_VARYING_MODULES) and q not in _STEADY_FUNCTIONS)
        for q in quals)


@dataclass(frozen=True)
class Evaluator:
    """Evaluates expressions in one scope."""

    scope: Scope
    # Read f-strings of static parts (dag_ids). Off for task arguments: the SQL model reads an
    # f-string's Python parts as placeholders, and must keep seeing them.
    fstrings: bool = False

    def value(self, node: Optional[cst.BaseExpression], depth: int = 0) -> Any:
        """The static value of `node`, or UNKNOWN."""
        if node is None or depth > MAX_DEPTH:
            return UNKNOWN
        try:
            return self._value(node, depth)
        except (ValueError, TypeError, OverflowError, ArithmeticError, SyntaxError):
            # SyntaxError: libcst evaluates string literals with ast.literal_eval, which
            # refuses some that libcst parses (a NUL byte, an unknown \N{...} name).
            return UNKNOWN

    def _value(self, node: cst.BaseExpression, depth: int) -> Any:
        if type(node) is cst.SimpleString:
            return simple_string_value(node)
        if isinstance(node, cst.ConcatenatedString):
            try:
                value = node.evaluated_value
            except (SyntaxError, ValueError):  # a part ast.literal_eval refuses but libcst parsed
                return UNKNOWN
            return UNKNOWN if value is None else value
        if type(node) is cst.Integer and node.value.isdecimal() and (node.value[0] != "0" or not node.value.strip("0")):
            return int(node.value)   # libcst's evaluated_value compiles each literal
        if isinstance(node, (cst.Integer, cst.Float)):
            return node.evaluated_value
        if self.fstrings and isinstance(node, cst.FormattedString):
            return self._formatted(node, depth)
        if isinstance(node, cst.Name):
            return self._name(node, depth)
        if isinstance(node, cst.UnaryOperation):
            inner = self.value(node.expression, depth + 1)
            if inner is UNKNOWN:
                return UNKNOWN
            if isinstance(node.operator, cst.Minus):
                return -inner
            if isinstance(node.operator, cst.Not):
                return not inner
            return inner if isinstance(node.operator, cst.Plus) else UNKNOWN
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            return self._sequence(node, depth)
        if isinstance(node, cst.Dict):
            return self._dict_literal(node, depth)
        if isinstance(node, cst.Call):
            return self._call(node, depth)
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node, depth)
        return UNKNOWN

    def _name(self, node: cst.Name, depth: int) -> Any:
        binding = self.scope.single(node.value)
        if binding is None and not self.scope.lookup(node.value):
            return {"True": True, "False": False, "None": None}.get(node.value, UNKNOWN)
        if isinstance(binding, ValueBinding):
            return binding.value
        found = self.scope.constant(node.value)
        if found is None:
            return UNKNOWN
        expr, scope = found
        reader = self if scope is self.scope else Evaluator(scope, self.fstrings)
        value = reader.value(expr, depth + 1)
        if isinstance(value, StaticDict):
            # `args = {...}` then `args["k"] = v` at module level: the dict the use sees.
            from dagguard.model.basics.returned_dicts import changed_in_place

            return changed_in_place(node.value, value, scope, self.fstrings, depth, Evaluator)
        return value

    def _formatted(self, node: cst.FormattedString, depth: int) -> Any:
        """An f-string of static strings and integers: f"{PREFIX}_orders"."""
        if "b" in node.prefix.lower() or "r" in node.prefix.lower():
            return UNKNOWN
        parts: list[str] = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                if "\\" in part.value or "{" in part.value or "}" in part.value:
                    return UNKNOWN  # escapes and doubled braces: not worth decoding by hand
                parts.append(part.value)
                continue
            if part.conversion is not None or part.format_spec is not None:
                return UNKNOWN
            value = self.value(part.expression, depth + 1)
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                return UNKNOWN
            parts.append(str(value))
        return "".join(parts)

    def _sequence(self, node: cst.List | cst.Tuple | cst.Set, depth: int) -> Any:
        items = []
        for element in node.elements:
            if isinstance(element, cst.StarredElement):
                inner = self.value(element.value, depth + 1)
                if not isinstance(inner, (list, tuple)):
                    return UNKNOWN
                items.extend(inner)
            else:
                items.append(self.value(element.value, depth + 1))
        return tuple(items) if isinstance(node, cst.Tuple) else items

    def static_dict(self, node: cst.BaseExpression, depth: int = 0) -> Optional[StaticDict]:
        """`node` as a StaticDict when it is a dict literal, `dict(...)`, a constant naming one,
        or a call of a project function returning one (dagguard.model.basics.returned_dicts)."""
        value = self.value(node, depth)
        return value if isinstance(value, StaticDict) else None

    def _dict_literal(self, node: cst.Dict, depth: int) -> StaticDict:
        entries: dict[str, DictEntry] = {}
        complete = True
        for element in node.elements:
            if isinstance(element, cst.StarredDictElement):
                complete = self._merge_into(entries, element.value, depth) and complete
                continue
            key = self.value(element.key, depth + 1)
            if not isinstance(key, str):
                complete = False
                continue
            entries[key] = DictEntry(element.key, element.value, self.value(element.value, depth + 1), self.scope)
        return StaticDict(entries, complete)

    def _call(self, node: cst.Call, depth: int) -> Any:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value == "copy" and not node.args:
            copied = self.value(func.value, depth + 1)   # `BASE.copy()`: a new dict, same entries
            return StaticDict(dict(copied.entries), copied.complete) if isinstance(copied, StaticDict) else UNKNOWN
        qual = self.scope.qualname(func)
        if qual is None:
            if not (isinstance(func, cst.Name) and func.value == "dict" and not self.scope.lookup("dict")):
                return self._returned(node, None, depth)
            qual = "dict"
        elif qual not in _CONSTRUCTORS:
            return self._returned(node, qual, depth)
        if qual in DICT_CONSTRUCTORS:
            return self._dict_call(node, depth)
        kwargs, args = self._call_arguments(node, depth)
        if kwargs is None:
            return UNKNOWN
        if qual in DATETIME_CONSTRUCTORS:
            return _make_datetime(args, kwargs)
        if qual in TIMEDELTA_CONSTRUCTORS:
            if any(a is UNKNOWN for a in args) or any(v is UNKNOWN for v in kwargs.values()):
                return UNKNOWN
            return dt.timedelta(*args, **kwargs)
        if qual in names.TRIGGER_TIMETABLES or qual in names.DATA_INTERVAL_TIMETABLES:
            return _make_timetable(qual, args, kwargs)
        if qual in names.ASSET_CLASSES:
            return AssetSchedule()
        return UNKNOWN

    def _returned(self, node: cst.Call, qual: Optional[str], depth: int) -> Any:
        """What a call of a same-file or project function returns, when that is a static dict."""
        func = node.func
        found = None
        if type(func) is cst.Name:
            found = self.scope.function(func.value)
        elif qual is not None and not qual.startswith("airflow."):
            link = self.scope.project_link()
            found = link.function(qual) if link is not None else None
        if found is None:
            return UNKNOWN
        # Imported here: reading a function's body needs this module's Evaluator.
        from dagguard.model.basics.returned_dicts import returned_dict

        return returned_dict(found[0], found[1], node, self, depth)

    def _call_arguments(self, node: cst.Call, depth: int) -> tuple[Optional[dict[str, Any]], list[Any]]:
        kwargs: dict[str, Any] = {}
        args: list[Any] = []
        for arg in node.args:
            if arg.star:
                return None, []
            value = self.value(arg.value, depth + 1)
            if arg.keyword is not None:
                kwargs[arg.keyword.value] = value
            else:
                args.append(value)
        return kwargs, args

    def _dict_call(self, node: cst.Call, depth: int) -> StaticDict:
        entries: dict[str, DictEntry] = {}
        complete = True
        for arg in node.args:
            if arg.keyword is not None:
                entries[arg.keyword.value] = DictEntry(arg.keyword, arg.value, self.value(arg.value, depth + 1),
                                                       self.scope)
            else:  # dict(**BASE) or dict(BASE)
                complete = self._merge_into(entries, arg.value, depth) and complete
        return StaticDict(entries, complete)

    def _merge_into(self, entries: dict[str, DictEntry], expr: cst.BaseExpression, depth: int) -> bool:
        """Add a static dict's entries; False when it is not (entirely) static."""
        merged = self.static_dict(expr, depth + 1)
        if merged is None:
            return False
        entries.update(merged.entries)
        return merged.complete

    def _binary(self, node: cst.BinaryOperation, depth: int) -> Any:
        left = self.value(node.left, depth + 1)
        right = self.value(node.right, depth + 1)
        if isinstance(left, AssetSchedule) or isinstance(right, AssetSchedule):
            return AssetSchedule()
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        op = node.operator
        if isinstance(op, cst.BitOr) and isinstance(left, StaticDict) and isinstance(right, StaticDict):
            # `BASE | {...}`: the right one's keys win, as in dict.update.
            return StaticDict({**left.entries, **right.entries}, left.complete and right.complete)
        if isinstance(op, cst.Add):
            return left + right
        if isinstance(op, cst.Subtract):
            return left - right
        if isinstance(op, cst.Multiply):
            return left * right
        return UNKNOWN

    def wall_clock_calls(self, node: Optional[cst.BaseExpression], depth: int = 0,
                         deferred: Container[int] = frozenset()) -> list[cst.Call]:
        """Calls reading the wall clock that evaluating `node` makes, following module
        constants and the same-file functions it calls: anywhere in it (f-strings,
        containers, arguments), but not in a lambda's body, which runs later, nor in the
        calls whose ids are in `deferred` (TaskFlow calls: their body runs in their own task)."""
        return self.calls_made(node, reads_clock, depth, deferred)

    def calls_made(self, node: Optional[cst.BaseExpression], test: CallTest, depth: int = 0,
                   deferred: Container[int] = frozenset()) -> list[cst.Call]:
        """Calls passing `test` that evaluating `node` makes, followed as wall_clock_calls does."""
        if node is None or depth > MAX_DEPTH:
            return []
        found: list[cst.Call] = []
        stack: list[cst.CSTNode] = [node]
        while stack:
            current = stack.pop()
            if id(current) in deferred:
                continue
            if isinstance(current, cst.Call) and test(current, self.scope):
                found.append(current)
            elif isinstance(current, cst.Name):
                constant = self.scope.constant(current.value)
                if constant is not None:
                    reader = self if constant[1] is self.scope else Evaluator(constant[1])
                    found.extend(reader.calls_made(constant[0], test, depth + 1, deferred))
            elif isinstance(current, cst.Attribute):
                stack.append(current.value)  # not the attribute's name: `x.now` is no module constant
            elif isinstance(current, cst.Arg):
                stack.append(current.value)  # nor a keyword's name
            elif not isinstance(current, cst.Lambda):
                if isinstance(current, cst.Call) and isinstance(current.func, cst.Name):
                    function = self.scope.single(current.func.value)
                    if isinstance(function, FunctionBinding) and not self._is_taskflow(function.node):
                        found.extend(self._calls_in_body(function.node, test, depth + 1))
                stack.extend(child_nodes(current))
        return found

    def _is_taskflow(self, function: cst.FunctionDef) -> bool:
        """A @task function: calling it makes a task, its body runs in that task, not here."""
        return any(is_task_decorator(decorator_target(d), self.scope) for d in function.decorators)

    def _calls_in_body(self, function: cst.FunctionDef, test: CallTest, depth: int) -> list[cst.Call]:
        """Calls passing `test` that a same-file function makes when called, outside logging and
        print (a helper computing an argument: `op_kwargs={"since": lookback()}`)."""
        if depth > MAX_DEPTH:
            return []
        inner = Evaluator(function_scope(function, self.scope))
        found: list[cst.Call] = []
        stack: list[cst.CSTNode] = list(child_nodes(function.body))
        while stack:
            current = stack.pop()
            if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) or _is_logging(current):
                continue
            if isinstance(current, cst.Call) and test(current, inner.scope):
                found.append(current)
                continue
            if isinstance(current, cst.Call) and isinstance(current.func, cst.Name):
                called = inner.scope.single(current.func.value)
                if isinstance(called, FunctionBinding) and called.node is not function:
                    found.extend(inner._calls_in_body(called.node, test, depth + 1))
            stack.extend(child_nodes(current))
        return found


def simple_string_value(node: cst.SimpleString) -> Any:
    """The string's value; plain literals without escapes skip libcst's ast.literal_eval."""
    text = node.value
    if text[0] in "'\"" and "\\" not in text and "\r" not in text:
        quote = text[:3] if text[:3] in ('"""', "'''") else text[0]
        return text[len(quote):-len(quote)]
    try:
        return node.evaluated_value
    except (SyntaxError, ValueError):  # what ast.literal_eval refuses but libcst parsed
        return UNKNOWN


def _make_datetime(args: list[Any], kwargs: dict[str, Any]) -> Any:
    tz = kwargs.pop("tz", None) if "tz" in kwargs else kwargs.pop("tzinfo", None)
    if any(a is UNKNOWN for a in args) or any(v is UNKNOWN for v in kwargs.values()):
        return UNKNOWN
    value = dt.datetime(*args, **kwargs)
    return value.replace(tzinfo=_timezone(tz))


def _timezone(tz: Any) -> dt.tzinfo:
    # Airflow treats naive datetimes as its default timezone, UTC unless configured.
    if isinstance(tz, str):
        try:
            from zoneinfo import ZoneInfo

            return ZoneInfo(tz)
        except Exception:
            return dt.timezone.utc
    return dt.timezone.utc


def _make_timetable(qual: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    kind = "trigger" if qual in names.TRIGGER_TIMETABLES else "data_interval"
    first = args[0] if args else kwargs.get("cron", kwargs.get("delta", UNKNOWN))
    interval = kwargs.get("interval")
    cron = first if isinstance(first, str) else None
    delta = first if isinstance(first, dt.timedelta) else None
    if cron is None and delta is None:
        return UNKNOWN
    has_interval = interval is not None and interval != dt.timedelta(0)
    return Timetable(kind=kind, cron=cron, delta=delta, has_interval=has_interval, qualname=qual)


_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})


def _is_logging(node: cst.CSTNode) -> bool:
    """print(...) or a logger's method call: what it is given goes nowhere else."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Name):
        return func.value == "print"
    return isinstance(func, cst.Attribute) and func.attr.value in _LOG_METHODS


def decorator_target(decorator: cst.Decorator) -> cst.BaseExpression:
    """What a decorator names: `task` for `@task` and for `@task(retries=2)`."""
    expr = decorator.decorator
    return expr.func if isinstance(expr, cst.Call) else expr


def is_task_decorator(expr: cst.BaseExpression, scope: Scope) -> bool:
    """Does `expr` name one of Airflow's TaskFlow decorators (@task, @task.python, @task.bash...)?"""
    quals = scope.qualnames(expr)
    return bool(quals) and all(
        any(q == t or q.startswith(t + ".") for t in names.TASK_DECORATORS) for q in quals
    )
