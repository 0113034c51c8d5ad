"""Check a large file in pieces, so that its time and memory grow linearly with its size.

libcst keeps about 500 bytes of tree per byte of source, and its parse slows as the heap
grows: a generated 5 MB file of 29,000 DAGs took 28 s and 2.5 GB to parse whole, 21 s and
180 MB in 256 KB pieces. CPython's own tree of it is 660 MB. So a file over LARGE_FILE_BYTES
is read in slices that CPython compiles one at a time, its top-level statements are grouped so
that statements sharing a name stay together (a DAG, its tasks and what wires them), and each
group, with the file's imports ahead of it, is checked as a file of its own; lines are mapped
back to the file's. When the file cannot be cut that way (a syntax error, one name shared by
every statement, a non-UTF-8 encoding), it is checked whole, as any other file.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Iterator, Optional, Sequence

from dagguard.engine.precheck import CPythonError, cpython_check
from dagguard.engine.relevance import imports_only_the_standard_library
from dagguard.engine.source_lines import line_starts

LARGE_FILE_BYTES = 512 * 1024
PIECE_BYTES = 256 * 1024        # the own text of one checked piece, about
SLICE_BYTES = 64 * 1024         # what CPython compiles at a time, about
# A slice that cannot end at a statement boundary within this many bytes (one statement that
# large, or a syntax error) makes the file one piece.
MAX_SLICE_BYTES = 4 * 1024 * 1024

# A line that may start a top-level statement: not indented, not a comment, not a clause that
# continues the statement before it. Whether it really does is CPython's to say.
_STATEMENT_START = re.compile(rb"^(?![ \t#\r\n\f)\]}]|(?:else|elif|except|finally)\b)", re.MULTILINE)
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_HEADER_STATEMENTS = (ast.Import, ast.ImportFrom, ast.Pass, ast.Raise, ast.If, ast.Try)


@dataclass
class Statement:
    """A top-level statement (or a few sharing a line): its lines and the names it uses."""

    first: int                   # 1-based, its decorators and the comments before it included
    last: int
    binds: set[str] = field(default_factory=set)
    loads: set[str] = field(default_factory=set)        # read as the statement runs
    deferred: set[str] = field(default_factory=set)     # read later, by a function it defines
    header: bool = False         # an import (or an import guard): copied ahead of every piece


@dataclass(frozen=True)
class Piece:
    source: bytes
    lines: tuple[int, ...]       # the file's line number of each of the piece's lines

    def line_of(self, line: int) -> int:
        return self.lines[min(max(line, 1), len(self.lines)) - 1]


@dataclass(frozen=True)
class Cut:
    """How a large file is checked: in pieces, or refused by CPython (one finding for it)."""

    pieces: tuple[Piece, ...] = ()
    error: Optional[CPythonError] = None
    # False when the file imports only the standard library: with no mention of a DAG in its
    # text, it cannot touch one (engine/relevance.py).
    touches_a_dag: bool = True


def cut(source: bytes) -> Optional[Cut]:
    """The pieces a large file is checked in; None when it is to be checked whole."""
    if len(source) <= LARGE_FILE_BYTES or source.startswith(b"\xef\xbb\xbf") or not _is_utf8(source):
        return None
    starts = line_starts(source)
    statements: list[Statement] = []
    text: list[bytes] = []
    standard_only = True
    for offset, piece_line, tree_or_error, blanked in _slices(source, starts):
        if isinstance(tree_or_error, CPythonError):
            if not tree_or_error.decisive:
                return None      # checked whole: libcst may read what this Python's parser cannot
            error = tree_or_error
            return Cut(error=CPythonError(error.line + piece_line - 1, error.column, error.message, True))
        if offset > 0 and _imports_the_future(tree_or_error):
            return None          # only legal at the top of the file: the whole-file check says so
        statements.extend(_statements(tree_or_error, piece_line - 1))
        text.append(blanked)
        standard_only = standard_only and imports_only_the_standard_library(tree_or_error)
    groups = _groups(statements, starts)
    if groups is None or len(groups) < 2:
        return None
    blanked_source = b"".join(text)
    lines = blanked_source.splitlines(keepends=True)
    header = [s for s in statements if s.header]
    return Cut(pieces=tuple(_piece(lines, sorted(header + group, key=lambda s: s.first)) for group in groups),
               touches_a_dag=not standard_only)


def _is_utf8(source: bytes) -> bool:
    for line in source.split(b"\n", 2)[:2]:
        found = _CODING.match(line)
        if found is not None:
            return found.group(1).lower().replace(b"_", b"-") in (b"utf-8", b"utf8")
    return True


def _slices(source: bytes, starts: Sequence[int]) -> Iterator[tuple[int, int, object, bytes]]:
    """(offset, first line, CPython's tree or error, the slice with constant data blanked) for
    consecutive slices that each compile alone. A slice ends where a line starts a statement
    and what comes before compiles: the tokenizer is then where it is at the start of a file, so
    the slices' statements are the file's statements."""
    line_at = {offset: number for number, offset in enumerate(starts, start=1)}
    # `^` follows a `\n` only: a line after a lone `\r` is no boundary (it is still a line)
    boundaries = [m.start() for m in _STATEMENT_START.finditer(source) if m.start() in line_at] + [len(source)]
    begin, index = 0, 0
    while begin < len(source):
        end, want = begin, SLICE_BYTES
        while True:
            # the first boundary `want` bytes on; each retry doubles it, so that a long statement
            # (a big string with lines at column 0) costs a few compiles, not one per line
            while index < len(boundaries) and boundaries[index] < max(end + 1, begin + want):
                index += 1
            want *= 2
            end = boundaries[index] if index < len(boundaries) else len(source)
            checked = cpython_check(source[begin:end])
            if checked.error is None or end >= len(source) or end - begin > MAX_SLICE_BYTES:
                break
            if checked.error.decisive:
                break            # nesting too deep: more text will not cure it
        yield begin, line_at[begin], checked.error or checked.tree, checked.source  # type: ignore[misc]
        if checked.error is not None:
            return
        begin = end


def _imports_the_future(tree: ast.Module) -> bool:
    return any(isinstance(s, ast.ImportFrom) and s.module == "__future__" for s in tree.body)


def _statements(tree: ast.Module, line_offset: int) -> Iterator[Statement]:
    for index, node in enumerate(tree.body):
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
        statement = Statement(first + line_offset, (node.end_lineno or node.lineno) + line_offset)
        _names(node, statement)
        statement.header = _is_header(node) or (index == 0 and line_offset == 0 and _is_docstring(node))
        yield statement


def _names(node: ast.AST, statement: Statement) -> None:
    """The module-level names the statement binds, the names it reads when it runs, and those
    it reads later (in function bodies, which see a name's last binding). Reading more than
    Python would (a class attribute, a comprehension's variable) only keeps more together."""
    stack: list[tuple[ast.AST, bool, bool]] = [(node, False, False)]   # (node, deferred, local)
    while stack:
        child, deferred, local = stack.pop()
        kind = type(child)
        if kind is ast.Name:
            if type(child.ctx) is ast.Load:  # type: ignore[attr-defined]
                (statement.deferred if deferred else statement.loads).add(child.id)  # type: ignore[attr-defined]
            elif not local:
                statement.binds.add(child.id)  # type: ignore[attr-defined]
            continue
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            if kind is not ast.Lambda and not local:
                statement.binds.add(child.name)  # type: ignore[attr-defined]
            now = [*getattr(child, "decorator_list", ()), *filter(None, [getattr(child, "returns", None)])]
            stack.extend((n, deferred, local) for n in now)
            later = [child.args, *(child.body if isinstance(child.body, list) else [child.body])]  # type: ignore[attr-defined]
            stack.extend((n, True, True) for n in later)
            continue
        if kind is ast.ClassDef:
            if not local:
                statement.binds.add(child.name)  # type: ignore[attr-defined]
            now = [*child.decorator_list, *child.bases, *child.keywords]  # type: ignore[attr-defined]
            stack.extend((n, deferred, local) for n in now)
            stack.extend((n, deferred, True) for n in child.body)  # type: ignore[attr-defined]
            continue
        if kind in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            stack.extend((n, deferred, True) for n in ast.iter_child_nodes(child))
            continue
        if not local:
            if kind is ast.alias:
                statement.binds.add((child.asname or child.name).partition(".")[0])  # type: ignore[attr-defined]
            elif kind is ast.ExceptHandler and child.name:  # type: ignore[attr-defined]
                statement.binds.add(child.name)  # type: ignore[attr-defined]
            elif kind in (ast.MatchAs, ast.MatchStar) and child.name:  # type: ignore[attr-defined]
                statement.binds.add(child.name)  # type: ignore[attr-defined]
        if kind is ast.Global:
            statement.binds.update(child.names)  # type: ignore[attr-defined]
        stack.extend((n, deferred, local) for n in ast.iter_child_nodes(child))


def _is_header(node: ast.stmt) -> bool:
    """An import, or an import guard (`try: import x except ImportError: ...`, `if TYPE_CHECKING:`)."""
    if not isinstance(node, _HEADER_STATEMENTS) or isinstance(node, (ast.Pass, ast.Raise)):
        return False
    return all(isinstance(s, _HEADER_STATEMENTS) for s in ast.walk(node) if isinstance(s, ast.stmt))


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _groups(statements: list[Statement], starts: Sequence[int]) -> Optional[list[list[Statement]]]:
    """The statements in groups of about PIECE_BYTES, none sharing a name with another;
    None when an import's name is bound again elsewhere (the pieces would disagree on it)."""
    _merge_shared_lines(statements)
    _take_gaps(statements, len(starts) - 1)
    header_names = {name for s in statements if s.header for name in s.binds}
    if any(s.binds & header_names for s in statements if not s.header):
        return None
    body = [s for s in statements if not s.header]
    parent = list(range(len(body)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        parent[root(i)] = root(j)

    # Module code runs in order: a statement reads the binding made last before it. A function
    # body runs later and may see any of them.
    latest: dict[str, int] = {}
    binders: dict[str, list[int]] = {}
    for i, statement in enumerate(body):
        for name in statement.loads:
            if name in latest:
                join(i, latest[name])
        for name in statement.binds:
            latest[name] = i
            binders.setdefault(name, []).append(i)
    deferred = {name for statement in body for name in statement.deferred}
    for name in deferred & binders.keys():
        first, *others = binders[name]
        for j in others:
            join(j, first)
    for i, statement in enumerate(body):
        for name in statement.deferred:
            if name in binders:
                join(i, binders[name][0])
    components: dict[int, list[Statement]] = {}
    for i, statement in enumerate(body):
        components.setdefault(root(i), []).append(statement)
    groups: list[list[Statement]] = [[]]
    size = 0
    for component in components.values():   # in the order of their first statements
        if size >= PIECE_BYTES:
            groups.append([])
            size = 0
        groups[-1].extend(component)
        size += sum(starts[s.last] - starts[s.first - 1] for s in component)
    return [sorted(g, key=lambda s: s.first) for g in groups if g]


def _merge_shared_lines(statements: list[Statement]) -> None:
    """`a = 1; b = 2` is two statements on one line: one piece must hold both."""
    merged: list[Statement] = []
    for statement in statements:
        if merged and statement.first <= merged[-1].last:
            last = merged[-1]
            last.last = max(last.last, statement.last)
            last.binds |= statement.binds
            last.loads |= statement.loads
            last.deferred |= statement.deferred
            last.header = last.header and statement.header
        else:
            merged.append(statement)
    statements[:] = merged


def _take_gaps(statements: list[Statement], line_count: int) -> None:
    """Comments and blank lines between statements go with the statement after them; the file's
    last lines with its last statement."""
    previous = 0
    for statement in statements:
        statement.first = previous + 1
        previous = statement.last
    if statements:
        statements[-1].last = max(statements[-1].last, line_count)


def _piece(lines: Sequence[bytes], statements: Sequence[Statement]) -> Piece:
    numbers = [n for s in statements for n in range(s.first, s.last + 1)]
    text = b"".join(lines[n - 1] for n in numbers)
    return Piece(text, tuple(numbers))
