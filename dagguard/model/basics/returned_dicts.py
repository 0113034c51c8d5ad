"""What a function returns when that is a dict built statically: `def default_args(): return {...}`.

A call of a function of this file or of a project module (`default_args=get_default_args()`,
`DAG(**dag_kwargs())`) is the dict its body returns, read without running it. The body's
statements are read in order, with the local names they bind and the dicts they change:
`d = BASE.copy()`, `d["k"] = v`, `d.update(...)`, `d |= {...}`, `d.setdefault(k, v)`,
`d.pop(k)`, `del d[k]`. Both ways of an `if` are read and joined: a key is known where every
path has it, its value where every path agrees on it, and a path that returns anything but a
dict (or falls off the end) makes the call unknown. A loop or `try` makes every name it touches
unknown; a decorated, async or generator function, or a statement not understood about a dict
(passed to a call, `d.clear()`), makes the call or that dict unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol, Sequence

import libcst as cst

from dagguard.model.basics.scope import (Binding, ConstantBinding, FunctionScope, ModuleScope, Scope, StatementScope, ValueBinding,
                                  function_scope, module_of, names_in, statement_bindings, target_names)
from dagguard.model.basics.tree import child_nodes
from dagguard.model.basics.static_values import MAX_DEPTH, UNKNOWN, DictEntry, StaticDict


class Evaluator(Protocol):
    """The evaluator (values.py's Evaluator, which imports this module), as this module uses it:
    a call's returned dict is read with the caller's own evaluator class."""

    fstrings: bool

    def __init__(self, scope: Scope, fstrings: bool) -> None: ...

    def value(self, expr: cst.BaseExpression, depth: int = 0) -> Any: ...


# Reading a function costs a few evaluator levels, so that nested helpers stay few and a
# function reaching itself stops quickly.
FUNCTION_DEPTH = 5
MAX_STATEMENTS = 200         # a function this long is no helper returning a dict
_READS = frozenset({"get", "keys", "items", "values", "copy"})
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})
Env = dict[str, Any]


@dataclass(frozen=True, eq=False)
class _Written:
    """A local name whose value is not known, with the expression it was assigned: the rules
    that look for what a value calls (DG104's clock reads) still follow it there."""

    expr: cst.BaseExpression


class _GiveUp(Exception):
    """The body does something this reader does not follow: the call is unknown."""


def returned_dict(function: cst.FunctionDef, definition: Scope, call: cst.Call, caller: Evaluator,
                  depth: int) -> Any:
    """The StaticDict `call` of `function` (defined in `definition`) returns, else UNKNOWN."""
    depth += FUNCTION_DEPTH
    if depth > MAX_DEPTH or function.decorators or function.asynchronous is not None \
            or not _returns_something(function):
        return UNKNOWN
    # The caller's own evaluator class reads the function (values.py imports this module).
    evaluator = type(caller)
    params = _parameter_values(function, call, caller, evaluator(definition.whole, caller.fstrings), depth)
    reader = _Reader(function_scope(function, definition), caller.fstrings, depth, evaluator)
    try:
        end = reader.block(_statements(function.body), params)
    except _GiveUp:
        return UNKNOWN
    results = list(reader.returns)
    if end is not None:
        results.append(None)   # falls off the end on some path: returns None there
    if not results:
        return UNKNOWN         # every path raises
    joined = results[0]
    for other in results[1:]:
        joined = join(joined, other)
    return joined if isinstance(joined, StaticDict) else UNKNOWN


def changed_in_place(name: str, value: StaticDict, scope: Scope, fstrings: bool, depth: int,
                     evaluator: type[Evaluator]) -> Any:
    """The module constant `name`'s dict `value` as code reading it in `scope` sees it: after the
    top-level statements that change it in place between its assignment and that code (all of
    them for code that runs later, or in another module). A change under an `if` is joined."""
    holder: Optional[Scope] = scope
    while holder is not None and name not in holder.bindings:
        holder = holder.parent
    if isinstance(holder, FunctionScope):
        return _changed_in_function(name, value, holder, fstrings, depth, evaluator)
    module = module_of(scope)
    changes = module.changes.get(name) if isinstance(module, ModuleScope) else None
    if not changes:
        return value
    binding = scope.single(name)
    made = next((index for candidate, (index, _) in zip(module.bindings.get(name, ()), module.places.get(name, ()))
                 if candidate is binding), None)
    if made is None:
        return value   # a local name of a function, not the module's constant
    until = scope.index if isinstance(scope, StatementScope) else None
    return _after_changes(name, value, changes, made, until, _Reader(module, fstrings, depth, evaluator))


def _changed_in_function(name: str, value: StaticDict, function: FunctionScope, fstrings: bool, depth: int,
                         evaluator: type[Evaluator]) -> Any:
    """A function's local dict after the body's top-level changes to it that follow its one
    assignment (a factory's `args = dict(BASE)` then `args["start_date"] = ...`). The use is
    taken to come after them all: a change under an `if` or a loop is joined."""
    changes = function.changes.get(name)
    places = function.places.get(name, ())
    if not changes or len(places) != 1:
        return value
    return _after_changes(name, value, changes, places[0], None, _Reader(function, fstrings, depth, evaluator))


def _after_changes(name: str, value: StaticDict, changes: Sequence[tuple[int, cst.CSTNode, bool]], made: int,
                   until: Optional[int], reader: "_Reader") -> Any:
    """`value` after the changes between statement `made` (its assignment) and `until` (the
    reading statement; None: all of them); one under an `if` or a loop is joined."""
    env: Optional[Env] = {name: value}
    try:
        for index, small, unconditional in changes:
            if index <= made or (until is not None and index >= until) or env is None:
                continue
            changed = reader.small(small, env)  # type: ignore[arg-type]
            env = changed if unconditional else join_env(env, changed)
    except _GiveUp:
        return UNKNOWN
    return env.get(name, UNKNOWN) if env is not None else UNKNOWN


def _returns_something(function: cst.FunctionDef) -> bool:
    """A `return <value>` in its body, no `yield`, and a body of helper size."""
    found = False
    count = 0
    stack: list[cst.CSTNode] = list(child_nodes(function.body))
    while stack:
        node = stack.pop()
        count += 1
        if count > MAX_STATEMENTS * 10 or isinstance(node, (cst.Yield, cst.Await)):
            return False
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Return) and node.value is not None:
            found = True
        stack.extend(child_nodes(node))
    return found


def _parameter_values(function: cst.FunctionDef, call: cst.Call, caller: Evaluator, definition: Evaluator,
                      depth: int) -> Env:
    """Each parameter's value for this call: what the caller passed, else its default."""
    params = function.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)]
    declared = {p.name.value: p for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    values: Env = {}
    mapped = not any(arg.star for arg in call.args)   # `f(*a, **k)`: which parameters they fill is unknown
    index = 0
    for arg in call.args if mapped else ():
        if arg.keyword is not None:
            values[arg.keyword.value] = caller.value(arg.value, depth)
        elif index < len(positional):
            values[positional[index]] = caller.value(arg.value, depth)
            index += 1
    for name, param in declared.items():
        if name not in values:
            values[name] = definition.value(param.default, depth) if mapped and param.default is not None \
                else UNKNOWN
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            values[star.name.value] = UNKNOWN
    return {name: value for name, value in values.items() if name in declared or name in _star_names(params)}


def _star_names(params: cst.Parameters) -> set[str]:
    return {star.name.value for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param)}


def _statements(body: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    if isinstance(body, cst.IndentedBlock):
        return body.body
    return (body,)  # type: ignore[return-value]   # `def f(): return {...}` on one line


class _Reader:
    """Reads a function's statements in order, keeping each local name's value."""

    def __init__(self, scope: Scope, fstrings: bool, depth: int, evaluator: type[Evaluator]) -> None:
        self.scope = scope
        self.evaluator = evaluator
        self.fstrings = fstrings
        self.depth = depth
        self.returns: list[Any] = []

    def value(self, expr: cst.BaseExpression, env: Env) -> Any:
        """`expr`'s value, its names read from `env` first; a dict it makes keeps that scope."""
        return self.evaluator(self._scope_of(env), self.fstrings).value(expr, self.depth)

    def written(self, expr: cst.BaseExpression, env: Env) -> Any:
        """What a local name assigned `expr` holds: its value, or the expression when unknown."""
        value = self.value(expr, env)
        return _Written(expr) if value is UNKNOWN else value

    def block(self, statements: Sequence[cst.CSTNode], env: Env) -> Optional[Env]:
        """The names' values after the statements; None when every path returned or raised."""
        current: Optional[Env] = dict(env)
        for statement in statements:
            if current is None:
                return None
            current = self.statement(statement, current)
        return current

    def statement(self, statement: cst.CSTNode, env: Env) -> Optional[Env]:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            current: Optional[Env] = env
            for small in statement.body:
                if current is None:
                    return None
                current = self.small(small, current)
            return current
        if isinstance(statement, cst.If):
            taken = self.block(_statements(statement.body), env)
            orelse = statement.orelse
            if orelse is None:
                other: Optional[Env] = dict(env)
            elif isinstance(orelse, cst.If):
                other = self.statement(orelse, dict(env))
            else:
                other = self.block(_statements(orelse.body), env)
            return join_env(taken, other)
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return {**env, statement.name.value: UNKNOWN}
        if isinstance(statement, cst.With):
            bound = {name for item in statement.items if item.asname is not None
                     for name in target_names(item.asname.name)}
            return self.block(_statements(statement.body), {**env, **{name: UNKNOWN for name in bound}})
        if isinstance(statement, (cst.For, cst.While, cst.Try)) or type(statement).__name__ == "TryStar":
            # Runs any number of times, or stops half-way: what it touches is unknown, and
            # what it returns is read with those names unknown.
            unknown = _forget(env, statement)
            for part in _blocks(statement):
                self.block(part, unknown)
            return unknown
        raise _GiveUp  # match, async blocks...

    def small(self, small: cst.BaseSmallStatement, env: Env) -> Optional[Env]:
        if isinstance(small, cst.Return):
            self.returns.append(self.value(small.value, env) if small.value is not None else None)
            return None
        if isinstance(small, cst.Raise):
            return None
        if isinstance(small, (cst.Pass, cst.Import, cst.ImportFrom, cst.Assert)):
            return env
        if isinstance(small, (cst.Global, cst.Nonlocal)):
            raise _GiveUp
        if isinstance(small, cst.Assign):
            return self.assign(small, env)
        if isinstance(small, cst.AnnAssign):
            if isinstance(small.target, cst.Name) and small.value is not None:
                return {**env, small.target.value: self.written(small.value, env)}
            return _forget(env, small)
        if isinstance(small, cst.AugAssign):
            return self.augmented(small, env)
        if isinstance(small, cst.Del):
            return self.delete(small, env)
        if isinstance(small, cst.Expr):
            return self.expression(small.value, env)
        return _forget(env, small)

    def assign(self, small: cst.Assign, env: Env) -> Env:
        if len(small.targets) != 1:
            return _forget(env, small)   # `a = b = {}`: two names, one dict
        target = small.targets[0].target
        if isinstance(target, cst.Name):
            return {**env, target.value: self.written(small.value, env)}
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) \
                and isinstance(env.get(target.value.value), StaticDict) and len(target.slice) == 1 \
                and isinstance(target.slice[0].slice, cst.Index):
            name = target.value.value
            held: StaticDict = env[name]
            key = self.value(target.slice[0].slice.value, env)
            if not isinstance(key, str):
                return _changed(env, name, StaticDict(dict(held.entries), False))
            entry = DictEntry(target.slice[0].slice.value, small.value, self.value(small.value, env),
                              self._scope_of(env))
            return _changed(env, name, StaticDict({**held.entries, key: entry}, held.complete))
        return _forget(env, small)

    def augmented(self, small: cst.AugAssign, env: Env) -> Env:
        target = small.target
        if isinstance(target, cst.Name) and isinstance(small.operator, cst.BitOrAssign) \
                and isinstance(env.get(target.value), StaticDict):
            added = self.value(small.value, env)
            if isinstance(added, StaticDict):
                held: StaticDict = env[target.value]
                return _changed(env, target.value, StaticDict({**held.entries, **added.entries},
                                                              held.complete and added.complete))
        return _forget(env, small)

    def delete(self, small: cst.Del, env: Env) -> Env:
        target = small.target
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) \
                and isinstance(env.get(target.value.value), StaticDict) and len(target.slice) == 1 \
                and isinstance(target.slice[0].slice, cst.Index):
            key = self.value(target.slice[0].slice.value, env)
            if isinstance(key, str):
                held: StaticDict = env[target.value.value]
                return _changed(env, target.value.value,
                                StaticDict({k: e for k, e in held.entries.items() if k != key}, held.complete))
        return _forget(env, small)

    def expression(self, expr: cst.BaseExpression, env: Env) -> Env:
        """A call statement: a dict method on a local dict, logging, or anything that may change
        the dicts it is given."""
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            method = expr.func.attr.value
            owner = expr.func.value
            if method in _LOG_METHODS or method in _READS and not any(
                    isinstance(env.get(n), StaticDict) for n in names_in(expr) - {_name(owner)}):
                return env
            if isinstance(owner, cst.Name) and isinstance(env.get(owner.value), StaticDict):
                changed = self.method(env[owner.value], method, expr, env)
                return _changed(env, owner.value, changed) if changed is not None else _forget(env, expr)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "print":
            return env
        return _forget(env, expr)

    def method(self, held: StaticDict, method: str, call: cst.Call, env: Env) -> Optional[StaticDict]:
        """The dict after `held.<method>(...)`; None when not followed."""
        if any(arg.star == "*" for arg in call.args):
            return None
        if method == "update":
            entries = dict(held.entries)
            complete = held.complete
            for arg in call.args:
                if arg.keyword is not None:
                    entries[arg.keyword.value] = DictEntry(arg.keyword, arg.value, self.value(arg.value, env),
                                                           self._scope_of(env))
                    continue
                added = self.value(arg.value, env)
                if not isinstance(added, StaticDict):
                    return None
                entries.update(added.entries)
                complete = complete and added.complete
            return StaticDict(entries, complete)
        keys = [self.value(arg.value, env) for arg in call.args if arg.keyword is None]
        if not keys or not isinstance(keys[0], str):
            return None
        if method == "pop":
            return StaticDict({k: e for k, e in held.entries.items() if k != keys[0]}, held.complete)
        if method == "setdefault" and len(call.args) == 2 and call.args[1].keyword is None:
            if keys[0] in held.entries:
                return held
            value_node = call.args[1].value
            # In a dict that may hold more keys, the one already there may win.
            value = self.value(value_node, env) if held.complete else UNKNOWN
            return StaticDict({**held.entries, keys[0]: DictEntry(call.args[0].value, value_node, value,
                                                                   self._scope_of(env))}, held.complete)
        return None

    def _scope_of(self, env: Env) -> Scope:
        return Scope(bindings={name: [_binding(v)] for name, v in env.items()}, parent=self.scope)


def _binding(value: Any) -> Binding:
    return ConstantBinding(value.expr) if isinstance(value, _Written) else ValueBinding(value)


def _name(expr: cst.BaseExpression) -> str:
    return expr.value if isinstance(expr, cst.Name) else ""


def _changed(env: Env, name: str, value: StaticDict) -> Env:
    """`name`'s dict changed in place: every name holding the same dict sees it."""
    held = env[name]
    return {key: (value if current is held else current) for key, current in env.items()}


def _forget(env: Env, node: cst.CSTNode) -> Env:
    """The names the statement mentions or binds become unknown (it may change them)."""
    touched = set(names_in(node))
    if isinstance(node, cst.BaseCompoundStatement):
        touched.update(name for name, _ in statement_bindings((node,)))
    return {name: (UNKNOWN if name in touched else value) for name, value in env.items()} | {
        name: UNKNOWN for name in touched if name not in env and _bound_by(node, name)}


def _bound_by(node: cst.CSTNode, name: str) -> bool:
    """Does the statement bind `name` (so the function's own binding of it must not be read)?"""
    if isinstance(node, cst.BaseCompoundStatement):
        return any(bound == name for bound, _ in statement_bindings((node,)))
    if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        return any(bound == name for bound, _ in statement_bindings((cst.SimpleStatementLine([node]),)))
    return False


def _blocks(statement: cst.CSTNode) -> list[Sequence[cst.CSTNode]]:
    """The statement lists of a loop's or try's parts (body, else, handlers, finally)."""
    parts: list[Sequence[cst.CSTNode]] = [_statements(statement.body)]  # type: ignore[attr-defined]
    for handler in getattr(statement, "handlers", ()) or ():
        parts.append(_statements(handler.body))
    for attr in ("orelse", "finalbody"):
        extra = getattr(statement, attr, None)
        if extra is not None:
            parts.append(_statements(extra.body))
    return parts


def join_env(first: Optional[Env], second: Optional[Env]) -> Optional[Env]:
    """The names' values after two paths meet (None: a path that ended)."""
    if first is None:
        return second
    if second is None:
        return first
    return {name: join(first[name], second[name]) if name in second else UNKNOWN for name in first} | {
        name: UNKNOWN for name in second if name not in first}


def join(first: Any, second: Any) -> Any:
    """What is known of a value that is `first` on one path and `second` on another."""
    if first is second:
        return first
    if isinstance(first, StaticDict) and isinstance(second, StaticDict):
        entries: dict[str, DictEntry] = {}
        for key, entry in first.entries.items():
            other = second.entries.get(key)
            if other is None:
                continue
            value = join(entry.value, other.value)
            entries[key] = entry if value is entry.value else DictEntry(entry.key_node, entry.value_node, value,
                                                                        entry.scope)
        complete = first.complete and second.complete and first.entries.keys() == second.entries.keys()
        return StaticDict(entries, complete)
    if isinstance(first, StaticDict) or isinstance(second, StaticDict):
        return UNKNOWN
    try:
        same = type(first) is type(second) and bool(first == second)
    except Exception:   # values whose comparison fails (naive against aware datetimes...)
        same = False
    return first if same else UNKNOWN
