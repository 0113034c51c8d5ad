"""A cheap way down a libcst tree: the children that can hold code, in source order.

libcst's visitors and `.children` rebuild or re-walk nodes and cost as much as the parse; this
reads dataclass fields directly, skips whitespace and punctuation fields, and avoids
`isinstance(x, CSTNode)`, an ABC check that is slow in a loop over every node.
"""

from __future__ import annotations

import dataclasses

import libcst as cst

_SKIPPED_FIELDS = frozenset({
    "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header",
    "footer", "trailing_whitespace", "equal", "colon", "dot", "operator", "newline", "indent",
    "star", "asynchronous", "whitespace", "prefix", "quote", "default_indent", "default_newline",
    "encoding", "value_type",
})
_FIELDS: dict[type, tuple[str, ...]] = {}
_IS_NODE: dict[type, bool] = {}


def _fields(kind: type) -> tuple[str, ...]:
    found = _FIELDS.get(kind)
    if found is None:
        found = tuple(
            f.name for f in dataclasses.fields(kind)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
        _FIELDS[kind] = found
    return found


def _is_node(kind: type) -> bool:
    found = _IS_NODE.get(kind)
    if found is None:
        found = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return found


def _children(node: cst.CSTNode, skipped: frozenset[type]) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []
    for name in _fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind is list or kind is tuple:
            for item in value:
                item_kind = type(item)
                if item_kind not in skipped and _is_node(item_kind):
                    out.append(item)
        elif kind not in skipped and _is_node(kind):
            out.append(value)
    return out


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The node's children that can contain code, in source order (decorators excepted)."""
    return _children(node, _NO_TYPES)


# Nodes that can contain nothing but text: the DAG walk never needs to visit them.
_NO_TYPES: frozenset[type] = frozenset()
_LEAF_TYPES: frozenset[type] = frozenset({
    cst.Name, cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis, cst.Pass,
    cst.Break, cst.Continue, cst.Import, cst.ImportFrom, cst.FormattedStringText,
})


def branch_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Like child_nodes, without the leaves (names, literals, imports)."""
    return _children(node, _LEAF_TYPES)
