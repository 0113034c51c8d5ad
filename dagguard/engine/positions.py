"""Line/column ranges of the few nodes that are reported.

libcst's PositionProvider records every node of the file and costs about twice the parse.
Findings need positions for a handful of nodes, usually near the top of a DAG definition,
so this runs libcst's own code generator, folds the emitted text into line/column only when a
reported node starts or ends, and stops as soon as the last one has been seen.

Code generation still cost more than the rules (15% of a check): most top-level statements
hold no reported node. With CPython's tree of the same text, each top-level statement's first
line is known, so only the statements holding a reported node are generated, each from its
own line (a walk finds them, at a quarter of the cost). Each generated statement must equal the
source text at that line; if one does not, the whole module is generated as before.
"""

from __future__ import annotations

import ast
import re
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, ContextManager, Iterable, Iterator, Mapping, Optional, Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState

from dagguard.engine.precheck import cpython_tree
from dagguard.engine.source_lines import line_starts
from dagguard.model.basics.tree import child_nodes

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


def locate_in_regions(module: cst.Module, nodes: Iterable[cst.CSTNode], regions: Mapping[int, Any],
                      text: Optional[str] = None, tree: Optional[ast.Module] = None,
                      ) -> tuple[dict[int, Span], dict[int, Any]]:
    """Spans of `nodes`, and for each node inside one of `regions` (subtrees by id(root)) the
    innermost one's value, both keyed by id(node); in the same single pass.

    `text` is the source the module was parsed from and `tree` CPython's tree of it (parsed
    here when not given): with them, only the statements holding a node are generated."""
    targets = {id(n): n for n in nodes}
    anchors = {key: _anchors(n) for key, n in targets.items()}
    wanted = {id(a) for pair in anchors.values() for a in pair}
    if not wanted:
        return {}, {}
    state = _LocatingState(module, wanted, regions)
    plan = _statement_plan(module, wanted, text, tree) if text is not None else None
    if plan is None or not _generate_statements(state, plan, text):  # type: ignore[arg-type]
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


def _statement_plan(module: cst.Module, wanted: set[int], text: str, tree: Optional[ast.Module],
                    ) -> Optional[list[tuple[cst.BaseStatement, int, int]]]:
    """(statement, first line, offset of that line) for each top-level statement holding a
    wanted node, up to the last one; None when a wanted node is outside every statement or
    CPython's statements do not line up with libcst's."""
    if tree is None:
        tree = cpython_tree(text)
        if tree is None:
            return None
    starts: Optional[Sequence[int]] = None
    statements = tree.body
    remaining = set(wanted)
    plan: list[tuple[cst.BaseStatement, int, int]] = []
    index = 0
    for statement in module.body:
        if not remaining:
            break
        first = statements[index] if index < len(statements) else None
        index += len(statement.body) if type(statement) is cst.SimpleStatementLine else 1  # `a; b`: two
        if first is None or index > len(statements):
            return None
        if not _take_wanted(statement, remaining):
            continue
        if starts is None:
            starts = line_starts(text)
        line = _first_token_line(first) - len(statement.leading_lines)
        if not 1 <= line < len(starts):
            return None
        plan.append((statement, line, starts[line - 1]))
    return plan if not remaining else None


def _take_wanted(statement: cst.CSTNode, remaining: set[int]) -> bool:
    """Does the statement hold a wanted node? Those it holds leave `remaining`."""
    held = False
    stack = [statement]
    while stack:
        node = stack.pop()
        if id(node) in remaining:
            remaining.discard(id(node))
            held = True
        stack.extend(child_nodes(node))
    return held


def _first_token_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", None)
    return min(statement.lineno, *(d.lineno for d in decorators)) if decorators else statement.lineno


def _generate_statements(state: _LocatingState, plan: Sequence[tuple[cst.BaseStatement, int, int]],
                         text: str) -> bool:
    """Generate each planned statement from its own line; False when one does not reproduce the
    source text there (the positions would be wrong: generate the whole module instead)."""
    for statement, line, offset in plan:
        mark = len(state.tokens)
        state.line, state.column, state.folded = line, 0, mark
        done = False
        try:
            statement._codegen(state)
        except _AllFound:
            done = True
        if not text.startswith("".join(state.tokens[mark:]), offset):
            return False
        if done:
            return True
    return True


def _start_of(state: _LocatingState, node: cst.CSTNode) -> Optional[tuple[int, int]]:
    syntactic = state.syntactic.get(id(node))
    return syntactic[0] if syntactic else state.starts.get(id(node))


def _end_of(state: _LocatingState, node: cst.CSTNode) -> Optional[tuple[int, int]]:
    syntactic = state.syntactic.get(id(node))
    return syntactic[1] if syntactic else state.ends.get(id(node))
