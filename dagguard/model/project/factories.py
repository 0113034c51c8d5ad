"""DAG factories: functions and wrapper classes that build a DAG from their parameters.

`create_dag(dag_id="x", schedule="@hourly")` is a DAG when `create_dag` returns the DAG it
builds (`return DAG(...)`, `dag = DAG(...); return dag`, `with DAG(...) as dag: ... return
dag`), and `TtdDag(...)` is one when its `__init__` keeps the DAG it builds
(`self._dag = DAG(...)`). The DAG's arguments are the factory's `DAG(...)` arguments evaluated
with its parameters bound to what the caller passed (or to their defaults). A value the
factory computes in branches or from the environment stays unknown.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import libcst as cst

from dagguard.config import DeclaredFactory
from dagguard.model.basics import airflow_names as names
from dagguard.model.basics.arguments import (ArgValue, Arguments, FactoryDefault, FactoryKeyword, call_arguments,
                                      dict_arguments)
from dagguard.model.project.project import ProjectIndex
from dagguard.model.basics.scope import (OPAQUE, ClassBinding, ConstantBinding, FunctionBinding, Scope, ValueBinding,
                                  function_scope)
from dagguard.model.basics.values import UNKNOWN, DictEntry, Evaluator, StaticDict

MAX_FACTORY_DEPTH = 4


@dataclass(frozen=True)
class Factory:
    """A function (or a class's `__init__`) whose call makes one DAG."""

    qualname: str
    function: cst.FunctionDef
    module_scope: Scope              # the scope the factory is defined in
    build: cst.Call                  # the DAG(...) call, or another factory's call, inside it
    skips_first: bool                # its first parameter is self or cls, not the caller's
    path: Optional[Path]
    module: Optional[cst.Module]     # its file's tree, for locating parameters in help


@dataclass(frozen=True)
class FactoryDag:
    """What a factory call makes: the DAG's arguments and default_args, as the caller sees them."""

    factory: str                     # qualified name, for messages
    args: Arguments
    default_args: Arguments


@dataclass
class Resolver:
    """Finds the factory a call names: same file, a project module, or a declared one."""

    index: Optional[ProjectIndex]
    path: Optional[Path]
    declared: Sequence[DeclaredFactory] = ()

    def __post_init__(self) -> None:
        self._declared = {d.qualname: d for d in self.declared}
        # Factories of project modules are analysed once per run: the index keeps their trees,
        # so their nodes' ids stay theirs. This file's own tree goes when it is checked.
        self._shared: dict[int, Optional[Factory]] = (
            self.index.analyses if self.index is not None else {})  # type: ignore[assignment]
        self._own: dict[int, Optional[Factory]] = {}
        module = self.index.module_name_of(self.path) if self.index is not None and self.path else None
        self._prefix = f"{module}." if module else ""   # qualifies this file's own factories

    def dag_from_call(self, call: cst.Call, scope: Scope, depth: int = 0) -> Optional[FactoryDag]:
        """The DAG `call` makes when it calls a factory, else None."""
        func = call.func
        if type(func) is not cst.Name and type(func) is not cst.Attribute:
            return None
        qual = scope.qualname(func)
        if qual is not None:
            declared = self._declared.get(qual) or self._declared.get(self._absolute(qual) or "")
            if declared is not None:
                return _declared_dag(declared, call, Evaluator(scope, fstrings=True))
        factory = self.factory_for(call, scope)
        if factory is None:
            return None
        declared = self._declared.get(factory.qualname)
        if declared is not None:   # a declaration corrects what was inferred
            return _declared_dag(declared, call, Evaluator(scope, fstrings=True))
        return self._made(factory, call, scope, depth)

    def _absolute(self, qual: str) -> Optional[str]:
        return self.index.absolute(qual, self.path) if self.index is not None else None

    def _factory_of(self, binding: object, module_scope: Scope, path: Optional[Path],
                    module: Optional[cst.Module], qualname: str, method: Optional[str] = None,
                    on_instance: bool = False) -> Optional[Factory]:
        node = getattr(binding, "node", None)
        if method is not None:
            node = _method(node, method, on_instance) if isinstance(node, cst.ClassDef) else None
            qualname = f"{qualname}.{method}"
        if node is None:
            return None
        cache = self._shared if module is not None else self._own
        if id(node) in cache:
            return cache[id(node)]
        cache[id(node)] = None   # a factory that reaches itself is not one
        factory = _analyse(node, module_scope, path, module, qualname, self)
        cache[id(node)] = factory
        return factory

    def _made(self, factory: Factory, call: cst.Call, caller: Scope, depth: int) -> Optional[FactoryDag]:
        if depth >= MAX_FACTORY_DEPTH:
            return None
        made = _apply(factory, call, Evaluator(caller, fstrings=True), self, depth)
        if made is None:
            return None
        return _rehome(made, call)

    def is_dag_build(self, call: cst.Call, scope: Scope) -> bool:
        """Does `call` (inside a function) build a DAG: Airflow's DAG(...) or a factory call?"""
        if scope.resolves_to(call.func, names.DAG_CLASSES):
            return True
        return self.factory_for(call, scope) is not None

    def factory_for(self, call: cst.Call, scope: Scope) -> Optional[Factory]:
        """The factory `call` calls: a function or class of this file or of a project module, a
        static/class method of one (`Helpers.make_dag(...)`), or a method of an instance made
        in place or bound to a module constant (`Shared(...).make_dag()`, `shared.make_dag()`)."""
        func = call.func
        if type(func) is not cst.Attribute:
            return self._named(func, scope, None, on_instance=False)
        method = func.attr.value  # type: ignore[attr-defined]
        owner = func.value  # type: ignore[attr-defined]
        if type(owner) is cst.Name:
            bound = scope.single(owner.value)  # type: ignore[attr-defined]
            if type(bound) is ConstantBinding and type(bound.value) is cst.Call:  # type: ignore[union-attr]
                owner = bound.value  # type: ignore[union-attr]
        if type(owner) is cst.Call:
            return self._named(owner.func, scope, method, on_instance=True)  # type: ignore[attr-defined]
        return self._named(owner, scope, method, on_instance=False) \
            or self._named(func, scope, None, on_instance=False)

    def _named(self, expr: cst.BaseExpression, scope: Scope, method: Optional[str],
               on_instance: bool) -> Optional[Factory]:
        if type(expr) is cst.Name:
            binding = scope.single(expr.value)  # type: ignore[attr-defined]
            if type(binding) is FunctionBinding or type(binding) is ClassBinding:
                return self._factory_of(binding, scope.whole, self.path, None,
                                        self._prefix + expr.value, method, on_instance)  # type: ignore[attr-defined]
        qual = scope.qualname(expr)
        if qual is None or self.index is None or qual.startswith("airflow."):
            return None
        found = self.index.resolve(qual, self.path)
        if found is None:
            return None
        return self._factory_of(found.binding, found.module.scope, found.module.path,
                                found.module.module, found.qualname, method, on_instance)


# --- recognising a factory -------------------------------------------------------------------


def _decorated(function: cst.FunctionDef, name: str) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == name for d in function.decorators)


def _method(cls: cst.ClassDef, name: str, on_instance: bool) -> Optional[cst.FunctionDef]:
    """The class's method `name`: any method on an instance, only static and class methods on
    the class itself."""
    for stmt in _body(cls.body):
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            if on_instance or _decorated(stmt, "staticmethod") or _decorated(stmt, "classmethod"):
                return stmt
    return None


def _is_method(function: cst.FunctionDef, module_scope: Scope) -> bool:
    """Defined in a class body (not a module-level function of that name)?"""
    binding = module_scope.single(function.name.value)
    return not (type(binding) is FunctionBinding and binding.node is function)  # type: ignore[union-attr]


def _analyse(node: Union[cst.FunctionDef, cst.ClassDef], module_scope: Scope, path: Optional[Path],
             module: Optional[cst.Module], qualname: str, resolver: Resolver) -> Optional[Factory]:
    if isinstance(node, cst.ClassDef):
        init = _method(node, "__init__", on_instance=True)
        if init is None:
            return None
        scope = function_scope(init, module_scope)
        build = _kept_build(init, scope, resolver)
        return Factory(qualname, init, module_scope, build, True, path, module) if build is not None else None
    if not isinstance(node, cst.FunctionDef) or node.asynchronous is not None:
        return None
    scope = function_scope(node, module_scope)
    build = _returned_build(node, scope, resolver)
    if build is None:
        return None
    skips_first = _is_method(node, module_scope) and not _decorated(node, "staticmethod")
    return Factory(qualname, node, module_scope, build, skips_first, path, module)


def _body(block: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    return block.body if isinstance(block, cst.IndentedBlock) else ()  # type: ignore[return-value]


def _small(stmt: cst.CSTNode) -> Sequence[cst.BaseSmallStatement]:
    return stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()


def _returned_build(function: cst.FunctionDef, scope: Scope, resolver: Resolver) -> Optional[cst.Call]:
    """The DAG-building call whose result the function returns, looked for in its body and in
    its `with` blocks (not in branches: a DAG made in one branch is not surely made)."""
    made: dict[str, cst.Call] = {}
    pending = list(_body(function.body))
    while pending:
        stmt = pending.pop(0)
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                if isinstance(item.item, cst.Call) and item.asname is not None \
                        and isinstance(item.asname.name, cst.Name):
                    made[item.asname.name.value] = item.item
            pending[0:0] = list(_body(stmt.body))
            continue
        for small in _small(stmt):
            if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.Call):
                made[small.targets[0].target.value] = small.value
            elif isinstance(small, cst.Return) and small.value is not None:
                value = small.value
                call = value if isinstance(value, cst.Call) else (
                    made.get(value.value) if isinstance(value, cst.Name) else None)
                if call is not None and resolver.is_dag_build(call, scope):
                    return call
                return None
    return None


def _kept_build(init: cst.FunctionDef, scope: Scope, resolver: Resolver) -> Optional[cst.Call]:
    """`self.<x> = DAG(...)` at the top of `__init__`'s body."""
    for stmt in _body(init.body):
        for small in _small(stmt):
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) and any(
                    isinstance(t.target, cst.Attribute) and isinstance(t.target.value, cst.Name)
                    and t.target.value.value == "self" for t in small.targets):
                if resolver.is_dag_build(small.value, scope):
                    return small.value
    return None


# --- applying a factory to a call ------------------------------------------------------------


@dataclass(frozen=True)
class _Bound:
    value: Any
    node: cst.BaseExpression          # the caller's expression, or the parameter's default
    default: Optional[FactoryDefault]
    scope: Optional[Scope] = None     # where `node` is read: the caller's, or the factory's module


def _bind(factory: Factory, call: cst.Call, caller: Evaluator) -> Optional[dict[str, _Bound]]:
    """Each parameter's value for this call; None when the call cannot be mapped."""
    params = factory.function.params
    positional = [*params.posonly_params, *params.params]
    if factory.skips_first and positional:
        positional = positional[1:]   # self
    keyword_names = {p.name.value for p in (*positional, *params.kwonly_params)}
    star_kwarg = params.star_kwarg.name.value if isinstance(params.star_kwarg, cst.Param) else None
    star_arg = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
    if any(arg.star == "*" for arg in call.args):
        return None   # which parameters it fills is not known
    # More positionals than parameters (into *args) leave `given` incomplete: defaults unknown.
    given = call_arguments(call, caller, positional=tuple(p.name.value for p in positional))
    complete = given.complete
    bound: dict[str, _Bound] = {}
    extra: dict[str, DictEntry] = {}
    for key, arg in given.values.items():
        if key in keyword_names:
            bound[key] = _Bound(arg.value, arg.node, None, arg.read_in(caller.scope))
        elif star_kwarg is not None:
            extra[key] = DictEntry(None, arg.node, arg.value, arg.read_in(caller.scope))
        else:
            return None  # not a call Python would accept
    definition = Evaluator(factory.module_scope, fstrings=True)
    # Where a parameter's name is read when nothing is known of it: opaque, not a module constant.
    inside = Scope(bindings={p.name.value: [OPAQUE] for p in (*positional, *params.kwonly_params)},
                   parent=factory.module_scope)
    for param in (*positional, *params.kwonly_params):
        name = param.name.value
        if name in bound:
            continue
        if not complete:
            bound[name] = _Bound(UNKNOWN, param.name, None, inside)
        elif param.default is not None:
            default = FactoryDefault(factory.qualname, name, factory.path, factory.module, param)
            bound[name] = _Bound(definition.value(param.default), param.default, default, factory.module_scope)
        else:
            bound[name] = _Bound(UNKNOWN, param.name, None, inside)  # a required parameter not passed
    if star_kwarg is not None:
        bound[star_kwarg] = _Bound(StaticDict(extra, complete), call, None, caller.scope)
    if star_arg is not None:
        bound[star_arg] = _Bound(UNKNOWN, call, None, caller.scope)
    return bound


def _bound_scope(factory: Factory, bound: dict[str, _Bound]) -> Scope:
    scope = function_scope(factory.function, factory.module_scope)
    for name, value in bound.items():
        # function_scope binds each parameter first (opaque); the body's own bindings follow.
        existing = scope.bindings.get(name, [])
        scope.bindings[name] = [ValueBinding(value.value), *existing[1:]]
    return scope


def _apply(factory: Factory, call: cst.Call, caller: Evaluator, resolver: Resolver,
           depth: int) -> Optional[FactoryDag]:
    bound = _bind(factory, call, caller)
    if bound is None:
        return None
    scope = _bound_scope(factory, bound)
    evaluator = Evaluator(scope, fstrings=True)
    inner = resolver.factory_for(factory.build, scope) \
        if not scope.resolves_to(factory.build.func, names.DAG_CLASSES) else None
    if inner is not None:
        made = _apply(inner, factory.build, evaluator, resolver, depth + 1) \
            if depth + 1 < MAX_FACTORY_DEPTH else None
        if made is None:
            return None
        args, default_args = made.args, made.default_args
    else:
        args = _keywords_written_by(factory, call_arguments(factory.build, evaluator, positional=("dag_id",)))
        default_args = dict_arguments(args.get("default_args"), evaluator)
    return FactoryDag(factory.qualname, _through(args, bound), _through(default_args, bound))


def _keywords_written_by(factory: Factory, args: Arguments) -> Arguments:
    """Mark the arguments whose keyword the factory's own DAG(...) call writes: a finding about
    that keyword belongs to the factory's call, not to each call of the factory."""
    written = {id(arg) for arg in factory.build.args if arg.keyword is not None and not arg.star}
    values = {name: replace(arg, factory_keyword=FactoryKeyword(factory.qualname, factory.path, arg.report_node))
              if id(arg.report_node) in written else arg
              for name, arg in args.values.items()}
    return Arguments(values, args.complete)


def _through(args: Arguments, bound: dict[str, _Bound]) -> Arguments:
    """Arguments whose expression is one of this factory's parameters now point at what the
    caller gave for it (or at the parameter's default)."""
    values: dict[str, ArgValue] = {}
    for name, arg in args.values.items():
        if isinstance(arg.node, cst.Name) and arg.node.value in bound:
            given = bound[arg.node.value]
            arg = replace(arg, node=given.node, factory_default=given.default or arg.factory_default,
                          scope=given.scope)
        values[name] = arg
    return Arguments(values, args.complete)


def _rehome(made: FactoryDag, call: cst.Call) -> FactoryDag:
    """Point every argument at the caller's file: at its own argument when it passed the
    value, else at the call."""
    own: dict[int, cst.CSTNode] = {}
    for arg in call.args:
        own[id(arg.value)] = arg
    return replace(made, args=_rehomed(made.args, own, call), default_args=_rehomed(made.default_args, own, call))


def _rehomed(args: Arguments, own: dict[int, cst.CSTNode], call: cst.Call) -> Arguments:
    values = {name: replace(arg, report_node=own.get(id(arg.node), call)) for name, arg in args.values.items()}
    return Arguments(values, args.complete)


# --- declared factories ----------------------------------------------------------------------


def _declared_dag(declared: DeclaredFactory, call: cst.Call, caller: Evaluator) -> FactoryDag:
    renames = dict(declared.arguments)
    values: dict[str, ArgValue] = {}
    for name, value in declared.defaults:
        default = FactoryDefault(declared.qualname, name, declared.declared_in, None, None)
        values[name] = ArgValue(name, call, _toml_value(value), "factory", call, default)
    given = call_arguments(call, caller, positional=("dag_id",) if "dag_id" not in renames.values() else ())
    for name, arg in given.values.items():
        target = renames.get(name, name)
        values[target] = replace(arg, name=target)
    default_args = dict_arguments(values.get("default_args"), caller)
    return FactoryDag(declared.qualname, Arguments(values, given.complete), default_args)


def _toml_value(value: Any) -> Any:
    # TOML dates are naive: Airflow reads a naive start_date in its default timezone, UTC.
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    return value

