"""What surrounds a task inside its DAG's body, and what changes from one pass of a loop to the
next: the facts that tell whether a loop makes the same task id twice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Union

import libcst as cst

from dagguard.model.basics.scope import names_in, target_names
from dagguard.model.basics.tree import child_nodes

COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


@dataclass(frozen=True)
class PrefixingGroup:
    """A task group entered inside a loop whose id prefixes its tasks' ids."""

    group_id: cst.BaseExpression


@dataclass(frozen=True)
class Condition:
    """An `if` (or `elif`/`else`) entered inside a loop: what is under it may not run every pass."""

    test: cst.BaseExpression


# A `for` statement or a comprehension, a PrefixingGroup or a Condition.
Level = Union[cst.CSTNode, PrefixingGroup, Condition]
Nesting = tuple[Level, ...]


@dataclass(frozen=True)
class LoopPass:
    """One `for` (a statement, or one `for` clause of a comprehension) and what runs on each pass."""

    node: cst.CSTNode
    targets: frozenset[str]
    iterable: cst.BaseExpression
    body: tuple[cst.CSTNode, ...]
    conditions: tuple[cst.BaseExpression, ...]  # a comprehension's `if` clauses inside this pass


def loop_passes(loop: cst.CSTNode) -> list[LoopPass]:
    """The `for`s of a loop level, outermost first: one for a statement, one per clause of a
    comprehension (`[f(p) for p in P for t in T]` repeats `f(p)` for every `t`)."""
    if isinstance(loop, cst.For):
        return [LoopPass(loop, frozenset(target_names(loop.target)), loop.iter, (loop.body,), ())]
    element: tuple[cst.CSTNode, ...] = (loop.key, loop.value) if isinstance(loop, cst.DictComp) \
        else (loop.elt,)  # type: ignore[attr-defined]
    clauses = []
    clause = loop.for_in  # type: ignore[attr-defined]
    while clause is not None:
        clauses.append(clause)
        clause = clause.inner_for_in
    passes = []
    for index, clause in enumerate(clauses):
        # The next clause itself (with those after it), not only its parts: what it binds from
        # this pass's variable (`for files in d.values() for file in files`) changes too.
        body = tuple(clauses[index + 1:index + 2]) + element
        conditions = tuple(condition.test for c in clauses[index:] for condition in c.ifs)
        passes.append(LoopPass(clause, frozenset(target_names(clause.target)), clause.iter,
                               body + conditions, conditions))
    return passes


def changing_names(loop: LoopPass) -> frozenset[str] | None:
    """Names that may hold a different value on each pass: the loop's targets and whatever the
    body binds from them, from a call, or by accumulating (`n += 1`). An inner loop over an
    iterable the pass does not change repeats the same values. None when a pass may stop early
    (`break`, `continue`, `return`, `raise`): what it makes is unknown."""
    bindings: list[tuple[frozenset[str], cst.CSTNode | None]] = []
    for node in _walk(loop.body):
        if isinstance(node, (cst.Break, cst.Continue, cst.Return, cst.Raise)):
            return None
        bindings.extend(_bindings(node))
    changing = set(loop.targets)
    grew = True
    while grew:
        grew = False
        for names, source in bindings:
            if names <= changing:
                continue
            if source is None or has_call(source) or mentions(source, changing):
                changing |= names
                grew = True
    return frozenset(changing)


def _bindings(node: cst.CSTNode) -> Iterator[tuple[frozenset[str], cst.CSTNode | None]]:
    """(names, the expression they are bound from, or None when any value may come)."""
    if isinstance(node, (cst.For, cst.CompFor)):
        yield frozenset(target_names(node.target)), node.iter
    elif isinstance(node, cst.Assign):
        for target in node.targets:
            yield frozenset(target_names(target.target)), node.value
    elif isinstance(node, cst.AnnAssign):
        yield frozenset(target_names(node.target)), node.value
    elif isinstance(node, cst.NamedExpr):
        yield frozenset(target_names(node.target)), node.value
    elif isinstance(node, cst.WithItem) and node.asname is not None:
        yield frozenset(target_names(node.asname.name)), node.item
    elif isinstance(node, cst.AugAssign):
        yield frozenset(target_names(node.target)), None
    elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        yield frozenset({node.name.value}), None
    elif isinstance(node, cst.ExceptHandler) and node.name is not None:
        yield frozenset(target_names(node.name.name)), None
    elif isinstance(node, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal, cst.MatchAs, cst.MatchStar)):
        yield names_in(node), None


def _walk(nodes: tuple[cst.CSTNode, ...]) -> Iterator[cst.CSTNode]:
    # Nested functions and classes run later (or never): their bodies are not this pass's.
    pending = list(nodes)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            pending.extend(child_nodes(node))


def mentions(node: cst.CSTNode, names: set[str] | frozenset[str]) -> bool:
    """Does the expression use any of `names` (or an attribute of that name: read generously)?"""
    return not names_in(node).isdisjoint(names)


def has_call(node: cst.CSTNode) -> bool:
    """Does the expression call anything, whose result may differ from one pass to the next?"""
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, cst.Call):
            return True
        pending.extend(child_nodes(current))
    return False
