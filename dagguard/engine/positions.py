"""Line/column ranges of the few nodes that are reported.

libcst's PositionProvider records every node of the file and costs about twice the parse.
Findings need positions for a handful of nodes, usually near the top of a DAG definition,
so this runs libcst's own code generator, folds the emitted text into line/column only when a
reported node starts or ends, and stops as soon as the last one has been seen.
"""

from __future__ import annotations

import re
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, ContextManager, Iterable, Iterator, Mapping, Optional

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")
_NOTHING_TO_RECORD: ContextManager[None] = nullcontext()


@dataclass(frozen=True)
class Span:
    """1-based line, 1-based column, end exclusive, as ruff reports."""

    line: int
    column: int
    end_line: int
    end_column: int


class _AllFound(Exception):
    pass


class _LocatingState(CodegenState):
    def __init__(self, module: cst.Module, wanted: set[int], regions: Mapping[int, Any]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.regions = regions
        self.open_regions: list[Any] = []
        self.owners: dict[int, Any] = {}  # a wanted node's innermost enclosing region
        self.remaining = len(wanted)
        self.starts: dict[int, tuple[int, int]] = {}
        self.syntactic: dict[int, tuple[tuple[int, int], tuple[int, int]]] = {}
        self.ends: dict[int, tuple[int, int]] = {}
        self.line = 1
        self.column = 0
        self.folded = 0

    def _here(self) -> tuple[int, int]:
        tokens = self.tokens
        if self.folded < len(tokens):
            text = "".join(tokens[self.folded:])
            self.folded = len(tokens)
            segments = _NEWLINE.split(text)
            if len(segments) == 1:
                self.column += len(text)
            else:
                self.line += len(segments) - 1
                self.column = len(segments[-1])
        return self.line, self.column

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)

    def before_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.regions:
            self.open_regions.append(self.regions[key])
        if key in self.wanted:
            self.starts[key] = self._here()
            if self.open_regions:
                self.owners[key] = self.open_regions[-1]

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.regions:
            self.open_regions.pop()
        if key in self.wanted and key not in self.ends:
            self.ends[key] = self._here()
            self.remaining -= 1
            if self.remaining == 0:
                raise _AllFound

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
                                  end_node: Optional[cst.CSTNode] = None) -> ContextManager[None]:
        # Called for most nodes: a shared no-op context manager is far cheaper than a generator.
        if id(node) not in self.wanted:
            return _NOTHING_TO_RECORD
        return self._recording(node)

    @contextmanager
    def _recording(self, node: cst.CSTNode) -> Iterator[None]:
        start = self._here()
        yield
        self.syntactic[id(node)] = (start, self._here())


def _anchors(node: cst.CSTNode) -> tuple[cst.CSTNode, cst.CSTNode]:
    """The nodes whose start and end delimit what a finding about `node` should underline."""
    if isinstance(node, cst.Arg):
        return (node.keyword or node.value), node.value
    if isinstance(node, cst.DictElement):
        return node.key, node.value
    if isinstance(node, cst.Decorator):
        return node.decorator, node.decorator
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return node.name, node.name
    return node, node


def locate(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, Span]:
    """Spans of `nodes`, keyed by id(node)."""
    return locate_in_regions(module, nodes, {})[0]


def locate_in_regions(module: cst.Module, nodes: Iterable[cst.CSTNode],
                      regions: Mapping[int, Any]) -> tuple[dict[int, Span], dict[int, Any]]:
    """Spans of `nodes`, and for each node inside one of `regions` (subtrees by id(root)) the
    innermost one's value, both keyed by id(node); in the same single pass."""
    targets = {id(n): n for n in nodes}
    anchors = {key: _anchors(n) for key, n in targets.items()}
    wanted = {id(a) for pair in anchors.values() for a in pair}
    if not wanted:
        return {}, {}
    state = _LocatingState(module, wanted, regions)
    try:
        module._codegen(state)
    except _AllFound:
        pass
    spans: dict[int, Span] = {}
    owners: dict[int, Any] = {}
    for key, (first, last) in anchors.items():
        start = _start_of(state, first)
        end = _end_of(state, last)
        if start is None or end is None:
            continue
        spans[key] = Span(start[0], start[1] + 1, end[0], end[1] + 1)
        if id(first) in state.owners:
            owners[key] = state.owners[id(first)]
    return spans, owners


def _start_of(state: _LocatingState, node: cst.CSTNode) -> Optional[tuple[int, int]]:
    syntactic = state.syntactic.get(id(node))
    return syntactic[0] if syntactic else state.starts.get(id(node))


def _end_of(state: _LocatingState, node: cst.CSTNode) -> Optional[tuple[int, int]]:
    syntactic = state.syntactic.get(id(node))
    return syntactic[1] if syntactic else state.ends.get(id(node))
