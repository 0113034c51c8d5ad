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

from dagguard.model.project import ModuleLink
from dagguard.model.scope import Scope, module_of
from dagguard.model.tree import child_nodes


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
    value makes) when it is written inside `value`, else at `value` itself (`found` came from
    a constant or function it names, which may live in yet another module)."""
    inside = _holds(value, found)
    return elsewhere(found if inside else value, scope, here)


def _holds(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    stack = [root]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(child_nodes(current))
    return False
