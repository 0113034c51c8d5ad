"""Where a value is made when another module of the project makes it.

An imported `default_args`, a project function's dict or a factory's body hold nodes of another
file's tree. A finding about such a value is reported in the checked file, at the argument that
brings it in, and names the file and line where the value is made: an `Elsewhere`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import libcst as cst

from dagguard.model.project.project import ModuleLink
from dagguard.model.basics.scope import Scope, module_of
from dagguard.model.basics.tree import child_nodes

MAX_FOLLOW = 8   # module constants followed from a value to the node it is made of


@dataclass(frozen=True)
class Elsewhere:
    """A node of another module's tree, with that module's file and tree (to find its line)."""

    node: cst.CSTNode
    path: Path
    module: cst.Module


def elsewhere(node: cst.CSTNode, scope: Scope, here: Scope) -> Optional[Elsewhere]:
    """`node`, read in `scope`, when that scope is another module's than `here`'s; else None."""
    home = module_of(scope)
    if home is module_of(here):
        return None
    link = getattr(home, "project", None)
    if not isinstance(link, ModuleLink) or link.path is None:
        return None
    module = link.index.module_at(link.path)
    if module is None:
        return None
    return Elsewhere(node, module.path, module.module)


def made_at(found: cst.CSTNode, value: cst.CSTNode, scope: Scope, here: Scope) -> Optional[Elsewhere]:
    """Where a value read in `scope` is made, when in another module: at `found` (a call the
    value makes) when it is written in `value` or in a module constant it names, else at
    `value` itself (`found` came from a function it calls)."""
    path = path_to(value, found, scope)
    if path is not None:
        return elsewhere(found, path[1], here)
    return elsewhere(value, scope, here)


def path_to(root: cst.CSTNode, target: cst.CSTNode, scope: Scope,
             depth: int = 0) -> Optional[tuple[list[cst.CSTNode], Scope]]:
    """The nodes enclosing `target` inside `root`, nearest first, and the scope the innermost are
    read in; module constants `root` names are followed, as the clock reads were found (the
    constant's name then stands in the path for its value)."""
    if depth > MAX_FOLLOW:
        return None
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(root, ())]
    constants: list[tuple[cst.BaseExpression, Scope, tuple[cst.CSTNode, ...], cst.CSTNode]] = []
    while stack:
        node, above = stack.pop()
        if node is target:
            return list(reversed(above)), scope
        if type(node) is cst.Name:
            constant = scope.constant(node.value)  # type: ignore[attr-defined]
            if constant is not None:
                constants.append((constant[0], constant[1], above, node))
            continue
        if type(node) is cst.Lambda:
            continue
        inner = (*above, node)
        stack.extend((child, inner) for child in child_nodes(node))
    for expr, home, above, name in constants:
        found = path_to(expr, target, home, depth + 1)
        if found is not None:
            # The name stands where its value is used: `TODAY.replace(...)` cuts the constant.
            return [*found[0], name, *reversed(above)], found[1]
    return None
