"""What a task's Python callable does with time, context and the outside world.

Read from the callable's libcst tree, never run. The facts are deliberately one-sided: a
write is recorded only for a recognised API, and anything that may carry the run's interval
into the function (a parameter named like a context key, the context passed on to another
function, an interval attribute) counts as "keyed", so rules built on them stay silent when
unsure.

One walk over the body gathers everything; the questions it asks of each node are answered by
one module per job: callable_context (context lookups), callable_clock (does a clock value
escape), callable_sql (SQL handed to hooks and cursors), callable_writes (write APIs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from dagguard.model.basics.arguments import call_arguments
from dagguard.model.tasks.callable_clock import CLOCK_FUNCTIONS, escapes
from dagguard.model.tasks.callable_context import GET_CURRENT_CONTEXT, ContextLookup, ContextReads, parameters
from dagguard.model.tasks.callable_sql import SQL_METHODS, SQLALCHEMY_TEXT, SqlCall, sql_call
from dagguard.model.tasks.callable_tree import CallableTree, call_name, formatted_text
from dagguard.model.basics.compat_fallback import is_compat_fallback
from dagguard.model.tasks.callable_writes import SQLALCHEMY_INSERT, WriteCall, WriteFinder
from dagguard.model.basics.context_keys import (DATELESS_KEYS, DATELESS_RUN_ATTRIBUTES, INTERVAL_KEYS,
                                        REMOVED_DAG_RUN_ATTRIBUTES, REMOVED_KEYS)
from dagguard.model.basics.scope import OPAQUE, FunctionBinding, Scope, ValueBinding, function_scope
from dagguard.model.sql.templates import analyse_template, has_jinja
from dagguard.model.basics.values import Evaluator, decorator_target, simple_string_value

__all__ = [
    "CLOCK_FUNCTIONS", "GET_CURRENT_CONTEXT", "IDEMPOTENT_DECORATORS", "IDEMPOTENT_HELPERS", "SQL_METHODS",
    "SQLALCHEMY_INSERT", "SQLALCHEMY_TEXT", "CallableFacts", "ClockRead", "ContextLookup", "SqlCall",
    "WriteCall", "analyse_callable", "call_name", "formatted_text",
]

IDEMPOTENT_HELPERS = frozenset({
    "dagguard.idempotent.write_interval", "dagguard.idempotent.write.write_interval",
    "dagguard.idempotent.interval_from_context", "dagguard.idempotent.interval.interval_from_context",
    "dagguard.idempotent.Interval", "dagguard.idempotent.interval.Interval",
})
IDEMPOTENT_DECORATORS = frozenset({
    "dagguard.idempotent.idempotent_write", "dagguard.idempotent.decorator.idempotent_write",
})
MAX_HELPER_DEPTH = 2


@dataclass(frozen=True)
class ClockRead:
    """A wall-clock call whose value reaches something other than a log line."""

    node: cst.Call
    name: str


@dataclass(frozen=True)
class CallableFacts:
    clock_reads: tuple[ClockRead, ...]
    writes: tuple[WriteCall, ...]
    sql: tuple[SqlCall, ...]
    removed_lookups: tuple[ContextLookup, ...]
    uses_interval: bool              # reads an interval value, or may (context passed on)
    idempotent_helper: bool          # uses dagguard.idempotent, idempotent by construction
    returns_value: bool
    write_like_calls: bool           # calls a method named like a write (insert_rows_json, put_item...)
    jinja_strings: tuple[tuple[cst.CSTNode, str], ...] = ()   # string literals holding Jinja
    # Reads of the run's logical date or data interval, which a partitioned run lacks: parameters
    # Airflow fills (a cst.Param), context lookups (`context["ds"]`, `.get(...)`), and run
    # attributes (`dag_run.data_interval_start`, key "dag_run.<attr>").
    dateless_reads: tuple[ContextLookup, ...] = ()


def analyse_callable(function: cst.FunctionDef, scope: Scope, module: cst.Module,
                     explicit_params: frozenset[str] = frozenset(),
                     names: Optional[dict[str, str]] = None,
                     context_params: Optional[frozenset[str]] = None) -> CallableFacts:
    """Facts about one task callable, following same-file helpers it calls by name.
    `names` collects the f-string placeholders' spellings, for messages. `context_params` names
    the parameters that receive the context (an operator's `execute(self, context)`); by
    default `**kwargs` does, as Airflow fills it for a Python callable."""
    return _Analysis(function, scope, module, explicit_params, 0, set(), names, context_params).facts()


class _Analysis:
    """The walk over one callable's body (and, through _helper, the helpers it calls)."""

    def __init__(self, function: cst.FunctionDef, scope: Scope, module: cst.Module,
                 explicit_params: frozenset[str], depth: int, seen: set[int],
                 names: Optional[dict[str, str]] = None,
                 context_params: Optional[frozenset[str]] = None,
                 forwarded: frozenset[str] = frozenset(),
                 item_parameters: frozenset[str] = frozenset()) -> None:
        self.tree = CallableTree(function, scope, module, names)
        self.given_context_params = context_params
        self.explicit = explicit_params
        self.depth = depth
        self.seen = seen | {id(function)}
        self.forwarded = forwarded   # a helper's parameters its caller passes the context
        self.item_parameters = item_parameters  # ... and those it passes a loop's item

    def facts(self) -> CallableFacts:
        tree = self.tree
        scope = tree.scope
        params = parameters(tree.function)
        filled = frozenset(params) - self.explicit  # what Airflow passes from the context
        if self.given_context_params is not None:
            filled = frozenset()  # a method's parameters are its caller's, not the context's
        context = ContextReads(tree, filled, is_task=self.depth == 0,
                               given_context_params=self.given_context_params, forwarded=self.forwarded)
        # The names surely holding the run's context, whose removed keys are reported: in a
        # helper, only what its caller passed it and get_current_context() (a helper's own
        # **kwargs is whatever its caller passes).
        sure = context.names if self.depth == 0 else self.forwarded | context.current_context_names()
        finder = WriteFinder(tree, self.item_parameters)
        uses_interval = bool(filled & INTERVAL_KEYS)
        removed: list[ContextLookup] = [
            ContextLookup(node, name) for name, node in params.items()
            if name in REMOVED_KEYS and name not in self.explicit
        ] if self.depth == 0 else []
        clock: list[ClockRead] = []
        writes: list[WriteCall] = []
        sql: list[SqlCall] = []
        helper = any(scope.resolves_to(decorator_target(d), IDEMPOTENT_DECORATORS)
                     for d in tree.function.decorators)
        # @idempotent_write fills these parameters itself, from the interval it writes.
        helper_filled = HELPER_FILLED_PARAMETERS if helper else frozenset()
        dateless: list[ContextLookup] = [
            ContextLookup(node, name) for name, node in params.items()
            if name in DATELESS_KEYS and name in filled and name not in helper_filled
        ] if self.depth == 0 else []
        returns_value = False
        write_like = False
        jinja: list[tuple[cst.CSTNode, str]] = []
        uses_tempfile = False
        # `type(...) is` rather than isinstance: libcst nodes are ABCs, slow to isinstance-check.
        for node in tree.nodes:
            kind = type(node)
            if kind is cst.Return and node.value is not None:  # type: ignore[attr-defined]
                returns_value = True
            elif kind is cst.Attribute:
                attr = node.attr.value  # type: ignore[attr-defined]
                if attr in INTERVAL_KEYS:
                    uses_interval = True
                if attr in REMOVED_DAG_RUN_ATTRIBUTES and self.depth == 0 \
                        and context.is_dag_run(node.value, filled):  # type: ignore[attr-defined]
                    removed.append(ContextLookup(node, f"dag_run.{attr}"))
                if attr in DATELESS_RUN_ATTRIBUTES and self.depth == 0 \
                        and context.is_dag_run(node.value, filled):  # type: ignore[attr-defined]
                    dateless.append(ContextLookup(node, f"dag_run.{attr}"))
            elif kind is cst.SimpleString or kind is cst.ConcatenatedString:
                text = simple_string_value(node) if kind is cst.SimpleString else None  # type: ignore[arg-type]
                if isinstance(text, str) and has_jinja(text):
                    jinja.append((node, text))
                    if analyse_template(text).interval:
                        uses_interval = True
            elif kind is cst.Name and node.value in context.names:  # type: ignore[attr-defined]
                lookup = context.lookup(node)
                if lookup is None:
                    if context.forwards(node):
                        uses_interval = True  # the context goes elsewhere: unknown use
                else:
                    if lookup.key in INTERVAL_KEYS:
                        uses_interval = True
                    if lookup.key in DATELESS_KEYS and node.value in sure \
                            and not _handles_none(lookup.node, tree.parents):  # type: ignore[attr-defined]
                        dateless.append(lookup)
                    if lookup.key in REMOVED_KEYS and node.value in sure \
                            and not is_compat_fallback(lookup.node, lookup.key, tree.parents,  # type: ignore[attr-defined]
                                                       context.key_read, context.names):
                        removed.append(lookup)
            elif kind is cst.Call:
                qual = scope.qualname(node.func)  # type: ignore[attr-defined]
                if qual is not None and qual.startswith("tempfile."):
                    uses_tempfile = True
                if qual in GET_CURRENT_CONTEXT:  # get_current_context()["ds"], read in place
                    lookup = context.lookup(node)
                    if lookup is not None:
                        uses_interval = uses_interval or lookup.key in INTERVAL_KEYS
                        if lookup.key in REMOVED_KEYS:
                            removed.append(lookup)
                        if lookup.key in DATELESS_KEYS and not _handles_none(lookup.node, tree.parents):
                            dateless.append(lookup)
                if qual in CLOCK_FUNCTIONS:
                    if escapes(tree, node, returns_xcom=self.depth == 0):
                        clock.append(ClockRead(node, call_name(node)))
                    continue
                if qual in IDEMPOTENT_HELPERS:
                    helper = True
                if qual in SQLALCHEMY_INSERT:
                    writes.append(finder.sqlalchemy_insert(node))
                    continue
                if finder.write_like(node):
                    write_like = True
                found_sql = sql_call(tree, context, node)
                if found_sql is not None:
                    sql.append(found_sql)
                write = finder.write(node, found_sql)
                if write is not None:
                    writes.append(write)
                inner = self._helper(node, context, sure, finder)  # type: ignore[arg-type]
                if inner is not None:
                    # The helper runs here: its SQL comes at this point of the task's order.
                    removed.extend(inner.removed_lookups)
                    dateless.extend(inner.dateless_reads)
                    uses_interval = uses_interval or inner.uses_interval
                    helper = helper or inner.idempotent_helper
                    write_like = write_like or inner.write_like_calls
                    writes.extend(inner.writes)
                    clock.extend(inner.clock_reads)
                    sql.extend(inner.sql)
        if uses_tempfile:
            # Local files in a temporary folder are staging, not the task's output.
            writes = [w for w in writes if not w.what.startswith(("open(", ".to_"))]
        return CallableFacts(tuple(clock), tuple(writes), tuple(sql), tuple(removed), uses_interval,
                             helper, returns_value, write_like, tuple(jinja), tuple(dateless))

    def _helper(self, call: cst.Call, context: ContextReads, sure: frozenset[str],
                finder: WriteFinder) -> Optional[CallableFacts]:
        """Facts of a same-file function called by name (a helper doing the actual write, or
        reading the context it is passed)."""
        if self.depth >= MAX_HELPER_DEPTH:
            return None
        found = called_helper(call, self.tree.scope)
        if found is None or id(found[0]) in self.seen:
            return None
        scope = _bound_to_call(found[0], found[1], call, self.tree.evaluator)
        inner = _Analysis(found[0], scope, self.tree.module, frozenset(),
                          self.depth + 1, self.seen, self.tree.names,
                          forwarded=context.forwarded_to(call, found[0], sure),
                          item_parameters=finder.items_passed(call, found[0]))
        return inner.facts()


# The parameters @idempotent_write fills from the interval it writes (idempotent/decorator.py's
# CONTEXT_PARAMETERS but logical_date, which it passes on from the context as it is).
HELPER_FILLED_PARAMETERS = frozenset({"data_interval_start", "data_interval_end", "ds"})


def _handles_none(lookup: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> bool:
    """`context.get("ds") or ...`, `context.get("ds") is None`: code that expects the key to be
    missing (a `.get()` only; a subscript raises first)."""
    if type(lookup) is not cst.Call:
        return False
    parent = parents.get(id(lookup))
    if type(parent) is cst.BooleanOperation:
        return True
    if type(parent) is cst.Comparison:
        return any(type(c.operator) in (cst.Is, cst.IsNot) for c in parent.comparisons)  # type: ignore[attr-defined]
    return type(parent) in (cst.If, cst.IfExp) and getattr(parent, "test", None) is lookup


def _bound_to_call(function: cst.FunctionDef, scope: Scope, call: cst.Call, caller: Evaluator) -> Scope:
    """The helper's scope with each parameter the call passes a static scalar bound to it
    (`publish(key="docs/index.html")`), as a factory's parameters are bound to its caller's."""
    params = function.params
    positional = tuple(p.name.value for p in (*params.posonly_params, *params.params))
    for name, arg in call_arguments(call, caller, positional=positional).values.items():
        existing = scope.bindings.get(name)
        # function_scope binds each parameter first (opaque); the body's own bindings follow.
        if existing and existing[0] is OPAQUE and isinstance(arg.value, (str, bool, int, float)):
            scope.bindings[name] = [ValueBinding(arg.value), *existing[1:]]
    return scope


def called_helper(call: cst.Call, scope: Scope) -> Optional[tuple[cst.FunctionDef, Scope]]:
    """The same-file function `call` calls by name, with its scope; None for anything else."""
    if not isinstance(call.func, cst.Name):
        return None
    binding = scope.single(call.func.value)
    if not isinstance(binding, FunctionBinding):
        return None
    root = scope
    while root.parent is not None:
        root = root.parent
    return binding.node, function_scope(binding.node, root)

