"""Resolved call arguments: what a DAG or task was given, statically."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

import libcst as cst

from dagguard.model.values import UNKNOWN, Evaluator, StaticDict


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

    @property
    def known(self) -> bool:
        return self.value is not UNKNOWN


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
                values[key] = ArgValue(key, entry.value_node, entry.value, "splat", arg)
        elif arg.star == "*":
            complete = False
        elif arg.keyword is not None:
            name = arg.keyword.value
            values[name] = ArgValue(name, arg.value, evaluator.value(arg.value), "keyword", arg)
        else:
            if index < len(positional):
                name = positional[index]
                values[name] = ArgValue(name, arg.value, evaluator.value(arg.value), "positional", arg)
            else:
                complete = False
            index += 1
    return Arguments(values, complete)


def dict_arguments(arg: Optional[ArgValue], evaluator: Evaluator) -> Arguments:
    """The entries of a dict-valued argument such as `default_args` (empty when absent)."""
    if arg is None:
        return Arguments({}, True)
    static = arg.value if isinstance(arg.value, StaticDict) else evaluator.static_dict(arg.node)
    if static is None:
        return Arguments({}, False)
    values = {
        key: ArgValue(key, entry.value_node, entry.value, "default_args",
                      _entry_report_node(entry.key_node, entry.value_node))
        for key, entry in static.entries.items()
    }
    return Arguments(values, static.complete)


def _entry_report_node(key: Optional[cst.CSTNode], value: cst.CSTNode) -> cst.CSTNode:
    return key if key is not None else value
