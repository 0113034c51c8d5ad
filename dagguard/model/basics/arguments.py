"""Resolved call arguments: what a DAG or task was given, statically."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

import libcst as cst

from dagguard.model.basics.scope import Scope, module_of
from dagguard.model.basics.values import UNKNOWN, Evaluator, StaticDict


@dataclass(frozen=True)
class FactoryDefault:
    """A DAG argument a factory fills from one of its parameter's defaults."""

    factory: str                      # the factory's qualified name
    parameter: str
    path: Optional[Path]              # the factory's file (or the config declaring it); None: this file
    module: Optional[cst.Module]      # that file's tree, to locate the parameter
    node: Optional[cst.Param]         # None for a declared factory's `defaults`


@dataclass(frozen=True)
class FactoryKeyword:
    """A DAG argument whose keyword a factory's own code writes (`DAG(schedule_interval=x)`
    inside `create_dag`): the factory's file holds that DAG call and its findings."""

    factory: str                      # the factory's qualified name
    path: Optional[Path]              # the factory's file; None: this file
    node: cst.Arg                     # the keyword argument of the factory's DAG(...) call


@dataclass(frozen=True)
class ArgValue:
    """One argument: where it is written, its static value (or UNKNOWN) and how it got there."""

    name: str
    node: cst.BaseExpression          # the value expression
    value: Any
    origin: str                       # "keyword", "positional", "splat", "default_args"
    report_node: cst.CSTNode          # the Arg or dict element a finding points at
    # Set when a factory's parameter default gave the value: the help names it.
    factory_default: Optional[FactoryDefault] = None
    # Set when a factory's DAG(...) call writes this keyword itself (not the caller's **kwargs).
    factory_keyword: Optional[FactoryKeyword] = None
    # The scope `node` is read in, when it is not the call's: a value written in another
    # module (an imported default_args, a factory's body) is read with that module's names.
    scope: Optional[Scope] = field(default=None, compare=False, repr=False)

    @property
    def known(self) -> bool:
        return self.value is not UNKNOWN

    def read_in(self, call_scope: Scope) -> Scope:
        """The scope to evaluate `node` in; `call_scope` is that of the call given the argument."""
        return self.scope if self.scope is not None else call_scope

    def written_in(self, scope: Scope) -> bool:
        """Is `node` written in `scope`'s module (the checked file's, where a fix may edit it)?"""
        return self.scope is None or module_of(self.scope) is module_of(scope)


@dataclass(frozen=True)
class Arguments:
    """Keyword arguments by name; `complete` is False when an unresolvable `**x` may add more."""

    values: Mapping[str, ArgValue] = field(default_factory=dict)
    complete: bool = True

    def get(self, name: str) -> Optional[ArgValue]:
        return self.values.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def surely_missing(self, name: str) -> bool:
        """True only when `name` is certainly not passed."""
        return self.complete and name not in self.values


def call_arguments(call: cst.Call, evaluator: Evaluator, positional: tuple[str, ...] = ()) -> Arguments:
    """Resolve `call`'s keyword arguments, `**splats` of static dicts, and the named positionals."""
    values: dict[str, ArgValue] = {}
    complete = True
    index = 0
    for arg in call.args:
        if arg.star == "**":
            splat = evaluator.static_dict(arg.value)
            if splat is None:
                complete = False
                continue
            complete = complete and splat.complete
            for key, entry in splat.entries.items():
                values[key] = ArgValue(key, entry.value_node, entry.value, "splat", arg,
                                       scope=entry.scope or evaluator.scope)
        elif arg.star == "*":
            complete = False
        elif arg.keyword is not None:
            name = arg.keyword.value
            values[name] = ArgValue(name, arg.value, evaluator.value(arg.value), "keyword", arg, scope=evaluator.scope)
        else:
            if index < len(positional):
                name = positional[index]
                values[name] = ArgValue(name, arg.value, evaluator.value(arg.value), "positional", arg,
                                        scope=evaluator.scope)
            else:
                complete = False
            index += 1
    return Arguments(values, complete)


def dict_arguments(arg: Optional[ArgValue], evaluator: Evaluator) -> Arguments:
    """The entries of a dict-valued argument such as `default_args` (empty when absent). An
    entry written in this module is reported at its key; one written in another module (an
    imported dict, a project function's) at the argument that brings it in."""
    if arg is None:
        return Arguments({}, True)
    scope = arg.read_in(evaluator.scope)
    reader = evaluator if scope is evaluator.scope else Evaluator(scope, evaluator.fstrings)
    static = arg.value if isinstance(arg.value, StaticDict) else reader.static_dict(arg.node)
    if static is None:
        return Arguments({}, False)
    here = module_of(evaluator.scope)
    values = {}
    for key, entry in static.entries.items():
        entry_scope = entry.scope or scope
        local = module_of(entry_scope) is here
        values[key] = ArgValue(key, entry.value_node, entry.value, "default_args",
                               _entry_report_node(entry.key_node, entry.value_node) if local else arg.report_node,
                               scope=entry_scope)
    return Arguments(values, static.complete)


def _entry_report_node(key: Optional[cst.CSTNode], value: cst.CSTNode) -> cst.CSTNode:
    return key if key is not None else value
