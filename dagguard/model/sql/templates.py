"""Jinja templates of a task, read with Jinja's own parser and never rendered.

`analyse_template` finds the variables a template uses and produces the template's text with
every `{{ ... }}` replaced by a placeholder identifier, so that SQL parsers see valid SQL: a
placeholder is a bare identifier, which is a column, a table name or part of a quoted string
depending on where the expression stood. jinja2 is imported only when a text holds Jinja.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Iterator, Optional

from dagguard.model.basics.context_keys import (CONTEXT_KEYS, END_KEYS, INTERVAL_KEYS, INTERVAL_OWNERS,
                                         REMOVED_ATTRIBUTES, REMOVED_DAG_RUN_ATTRIBUTES, REMOVED_KEYS,
                                         RUN_DATE_KEYS, SAME_INSTANT_START_KEYS)

PLACEHOLDER = re.compile(r"__dgt_[0-9a-f]{10}__")
_WALL_CLOCK_METHODS = frozenset({"now", "utcnow", "today"})


@dataclass(frozen=True)
class Expression:
    """One `{{ ... }}` of a template, replaced by `token` in the placeholder text."""

    token: str
    source: str                      # the expression, respelled for messages
    roots: frozenset[str]            # free variables it reads
    interval: bool                   # derived from the run's interval (ds, data_interval_end...)
    bound: Optional[str]             # "end", "start" (same instant as end on a trigger run) or None
    shape: str                       # the filters and methods applied to the bound, e.g. "|ds"
    key: Optional[str]               # the bound's variable, e.g. "data_interval_end"
    run_date: Optional[str] = None   # the logical-date key it is, maybe formatted: "ds", "logical_date"


@dataclass(frozen=True)
class Template:
    """What a templated string uses, and its text with placeholders."""

    ok: bool                         # Jinja could parse it
    text: str                        # the text with placeholders (the raw text when not ok)
    expressions: tuple[Expression, ...]
    roots: frozenset[str]            # every free variable, in expressions and statements
    removed: tuple[str, ...]         # removed Airflow 2 keys, one entry per occurrence
    wall_clock: tuple[str, ...]      # `macros.datetime.now()` and the like, one per occurrence

    @property
    def interval(self) -> bool:
        """Does any part of the template depend on the run's interval?"""
        return any(e.interval for e in self.expressions) or bool(self.roots & INTERVAL_KEYS)

    @property
    def unknown_roots(self) -> frozenset[str]:
        """Variables that are not Airflow's: user-defined macros, whose value is unknown."""
        return self.roots - CONTEXT_KEYS

    def expression(self, token: str) -> Optional[Expression]:
        for expr in self.expressions:
            if expr.token == token:
                return expr
        return None


def has_jinja(text: str) -> bool:
    """Cheap test before importing jinja2."""
    return "{{" in text or "{%" in text


def plain_template(text: str) -> Template:
    """The analysis of a string without Jinja: itself, using nothing."""
    return Template(True, text, (), frozenset(), (), ())


def analyse_template(text: str) -> Template:
    """Variables, removed keys and placeholder text of one templated string."""
    if not has_jinja(text):
        return plain_template(text)
    import jinja2
    from jinja2 import nodes

    try:
        tree = jinja2.Environment().parse(text)
    except jinja2.TemplateError:
        return Template(False, text, (), frozenset(), (), ())
    except Exception:  # RecursionError and such on pathological input: not a finding
        return Template(False, text, (), frozenset(), (), ())
    out: list[str] = []
    expressions: dict[str, Expression] = {}
    _render(tree.body, text, out, expressions, nodes)
    roots: set[str] = set()
    removed: list[str] = []
    wall_clock: list[str] = []
    # Names a template binds itself ({% for t in ... %}, {% set x = ... %}) are not variables.
    bound_here = {n.name for n in tree.find_all(nodes.Name) if n.ctx in ("store", "param")}
    for node in tree.find_all(nodes.Name):
        if node.ctx == "load" and node.name not in bound_here:
            roots.add(node.name)
            if node.name in REMOVED_KEYS:
                removed.append(node.name)
    for node in tree.find_all(nodes.Getattr):
        owner = node.node
        if isinstance(owner, nodes.Name) and owner.name in INTERVAL_OWNERS and node.attr in (
                REMOVED_DAG_RUN_ATTRIBUTES if owner.name == "dag_run" else REMOVED_ATTRIBUTES):
            removed.append(f"{owner.name}.{node.attr}")
    for node in tree.find_all(nodes.Call):
        dotted = _dotted(node.node, nodes)
        if dotted and dotted.startswith("macros.") and dotted.rsplit(".", 1)[-1] in _WALL_CLOCK_METHODS:
            wall_clock.append(dotted + "()")
    return Template(True, "".join(out), tuple(expressions.values()), frozenset(roots),
                    tuple(removed), tuple(wall_clock))


def _render(body: list[Any], text: str, out: list[str], expressions: dict[str, Expression],
            nodes: Any) -> None:
    """Write the template's text with placeholders: the first branch of an if, a loop body once."""
    for stmt in body:
        if isinstance(stmt, nodes.Output):
            for node in stmt.nodes:
                if isinstance(node, nodes.TemplateData):
                    out.append(node.data)
                else:
                    expr = _expression(node, nodes)
                    expressions.setdefault(expr.token, expr)
                    out.append(expr.token)
        elif isinstance(stmt, (nodes.If, nodes.For, nodes.With, nodes.Scope, nodes.FilterBlock,
                               nodes.ScopedEvalContextModifier, nodes.Block)):
            _render(stmt.body, text, out, expressions, nodes)


def _expression(node: Any, nodes: Any) -> Expression:
    source = _source(node, nodes)
    # Equal expressions get equal placeholders: `DELETE FROM {{ t }}` matches `INSERT INTO {{ t }}`.
    token = "__dgt_" + hashlib.sha1(repr(node).encode("utf-8")).hexdigest()[:10] + "__"
    roots = frozenset(n.name for n in _walk(node, nodes) if isinstance(n, nodes.Name) and n.ctx == "load")
    interval = bool(roots & INTERVAL_KEYS) or any(
        isinstance(n, nodes.Getattr) and isinstance(n.node, nodes.Name)
        and n.node.name in INTERVAL_OWNERS and n.attr in INTERVAL_KEYS
        for n in _walk(node, nodes)
    )
    bound, shape, key = _bound(node, nodes)
    return Expression(token, source, roots, interval, bound, shape, key, _run_date(node, nodes))


def _peel(node: Any, nodes: Any) -> tuple[Any, str]:
    """The value under an expression's formatting (filters, method calls, macros.ds_format),
    and that formatting as a shape, e.g. "|ds"."""
    shape: list[str] = []
    while True:
        if isinstance(node, nodes.Filter) and node.node is not None:
            shape.append("|" + node.name)
            node = node.node
        elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr) \
                and not (_dotted(node.node, nodes) or "").startswith("macros."):
            shape.append("." + node.node.attr)   # data_interval_end.strftime(...)
            node = node.node.node
        elif isinstance(node, nodes.Call) and _dotted(node.node, nodes) in ("macros.ds_format",) and node.args:
            shape.append(".ds_format")
            node = node.args[0]
        else:
            return node, "".join(reversed(shape))


def _key(node: Any, nodes: Any) -> Optional[str]:
    """The context key a bare name or `dag_run.<key>` reads."""
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name) and node.node.name in INTERVAL_OWNERS:
        return node.attr
    return None


def _bound(node: Any, nodes: Any) -> tuple[Optional[str], str, Optional[str]]:
    """Is the expression a plain interval bound, possibly formatted? Arithmetic makes it None."""
    node, shape = _peel(node, nodes)
    if isinstance(node, nodes.Call) and _dotted(node.node, nodes) == "macros.ds_add" \
            and len(node.args) == 2 and isinstance(node.args[1], nodes.Const):
        days = node.args[1].value
        inner = node.args[0]
        if isinstance(inner, nodes.Name) and inner.name == "ds" and isinstance(days, int) and days > 0:
            return "end", shape, f"macros.ds_add(ds, {days})"
        return None, "", None
    key = _key(node, nodes)
    if key in END_KEYS:
        return "end", shape, key
    if key in SAME_INSTANT_START_KEYS:
        return "start", shape, key
    return None, "", None


def _run_date(node: Any, nodes: Any) -> Optional[str]:
    """The logical-date key the expression is, possibly formatted (`ds`, `logical_date | ds`)."""
    key = _key(_peel(node, nodes)[0], nodes)
    return key if key in RUN_DATE_KEYS else None


def _walk(node: Any, nodes: Any) -> Iterator[Any]:
    yield node
    yield from node.find_all(nodes.Node)


def _dotted(node: Any, nodes: Any) -> Optional[str]:
    parts: list[str] = []
    while isinstance(node, nodes.Getattr):
        parts.append(node.attr)
        node = node.node
    if not isinstance(node, nodes.Name):
        return None
    parts.append(node.name)
    return ".".join(reversed(parts))


def _source(node: Any, nodes: Any) -> str:
    """A readable spelling of an expression, for messages; unknown node kinds fall back to repr."""
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.Const):
        return repr(node.value)
    if isinstance(node, nodes.Getattr):
        return f"{_source(node.node, nodes)}.{node.attr}"
    if isinstance(node, nodes.Getitem):
        return f"{_source(node.node, nodes)}[{_source(node.arg, nodes)}]"
    if isinstance(node, nodes.Filter) and node.node is not None:
        args = "".join(f", {_source(a, nodes)}" for a in node.args)[2:]
        return f"{_source(node.node, nodes)} | {node.name}" + (f"({args})" if args else "")
    if isinstance(node, nodes.Call):
        args = ", ".join(_source(a, nodes) for a in node.args)
        return f"{_source(node.node, nodes)}({args})"
    if isinstance(node, nodes.BinExpr):
        return f"{_source(node.left, nodes)} {node.operator} {_source(node.right, nodes)}"
    return repr(node)


def display(text: str, templates: "list[Template]", extra: Optional[dict[str, str]] = None) -> str:
    """`text` with placeholders turned back into `{{ expr }}` (or `{expr}` for f-strings)."""
    names = dict(extra or {})
    for template in templates:
        for expr in template.expressions:
            names[expr.token] = "{{ " + expr.source + " }}"
    return PLACEHOLDER.sub(lambda m: names.get(m.group(0), "{...}"), text)

