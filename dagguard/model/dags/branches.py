"""Which branch of each `if`/`match` a node sits in, so that definitions in branches that
exclude each other (only one runs) are not taken for duplicates."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from dagguard.model.dags.branch_path import BranchPath, exclusive
from dagguard.model.basics.tree import child_nodes

__all__ = ["BranchPath", "branch_paths", "exclusive"]


def branch_paths(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, BranchPath]:
    """The branch path of each of `nodes`, by id, found in one walk of the module."""
    wanted = {id(node) for node in nodes}
    found: dict[int, BranchPath] = {}
    pending: list[tuple[cst.CSTNode, BranchPath, bool]] = [(module, (), False)]
    while pending and len(found) < len(wanted):
        node, path, looping = pending.pop()
        if id(node) in wanted:
            found[id(node)] = path
        # In a loop both branches may run, on different passes: they exclude nothing there.
        looping = looping or isinstance(node, _LOOPS)
        for index, part in _parts(node):
            taken = path if index is None or looping else path + ((id(node), index),)
            pending.append((part, taken, looping))
    return found


_LOOPS = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _parts(node: cst.CSTNode) -> list[tuple[int | None, cst.CSTNode]]:
    """The node's children, each with its branch index, or None for a part every path runs."""
    if isinstance(node, (cst.If, cst.IfExp)):
        parts: list[tuple[int | None, cst.CSTNode]] = [(None, node.test), (0, node.body)]
        if node.orelse is not None:
            parts.append((1, node.orelse))
        return parts
    if isinstance(node, cst.Match):
        return [(None, node.subject)] + [(index, case) for index, case in enumerate(node.cases)]
    return [(None, child) for child in child_nodes(node)]
