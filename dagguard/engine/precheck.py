"""What CPython's own parser says about a file, before libcst is given it.

libcst's time and memory grow faster than linearly with nesting: 5,000 nested brackets took
2.7 GB, 20,000 exhausted 24 GB and 100,000 crashed the process; a 10,000-term `a + a + ...`
or `not not ... x` takes minutes. CPython's C parser reads the same files in milliseconds and
refuses the worst of them (200 nested brackets, 100 indentation levels, NUL bytes), so it
runs first: what it refuses for being nested too deeply, and expressions deeper than
MAX_EXPRESSION_DEPTH that it accepts, never reach libcst. Its tree also shows the large
constant data that libcst need not read (constant_data.py).
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field
from typing import Optional, Union

from dagguard.engine.constant_data import blank_constant_data
from dagguard.engine.source_lines import line_starts
from dagguard.model.basics.parsing import collector_paused

# Well above real code (a few dozen), below where libcst takes seconds per statement;
# CPython with its default recursion limit refuses about 3,000 when it imports the file.
MAX_EXPRESSION_DEPTH = 1000


@dataclass(frozen=True)
class CPythonError:
    """CPython's message and 1-based position; `decisive` when libcst must not see the file."""

    line: int
    column: int
    message: str
    decisive: bool


@dataclass(frozen=True)
class Precheck:
    """CPython's verdict, and the text libcst is to parse (large constant data blanked out)."""

    error: Optional[CPythonError]
    source: Union[bytes, str]
    # CPython's tree of the original source, when it parsed: read by the relevance test.
    tree: Optional[ast.Module] = field(default=None, compare=False, repr=False)


def cpython_check(source: Union[bytes, str]) -> Precheck:
    """CPython's verdict on `source` (None when it parses and is shallow enough for libcst)."""
    with collector_paused():
        return _check(source)


def _check(source: Union[bytes, str]) -> Precheck:
    parsed = _tree_or_error(source)
    if isinstance(parsed, ast.Module):
        blanked = blank_constant_data(source, parsed) if isinstance(source, bytes) else source
        return Precheck(None, blanked, parsed)
    return Precheck(parsed, source)


def cpython_tree(source: Union[bytes, str]) -> Optional[ast.Module]:
    """CPython's syntax tree of `source`, or None when it does not parse (no depth check)."""
    try:
        with collector_paused():
            return _compiled(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):   # UnicodeDecodeError too
        return None


def _compiled(source: Union[bytes, str]) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes and the like: not the checker's to print
        return compile(source, "<dag file>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)


def _tree_or_error(source: Union[bytes, str]) -> Union[ast.Module, CPythonError]:
    """CPython's syntax tree of a file shallow enough for libcst, else what CPython refuses."""
    try:
        tree = _compiled(source)
    except SyntaxError as exc:
        # Other syntax errors are not decisive: libcst may read syntax newer than this Python's.
        return CPythonError(max(exc.lineno or 1, 1), max(exc.offset or 1, 1), f"SyntaxError: {exc.msg}",
                            _is_limit(exc.msg))
    except UnicodeDecodeError as exc:
        return CPythonError(1, 1, str(exc), False)
    except ValueError as exc:  # NUL bytes (Python < 3.11.4 raises ValueError for them)
        return CPythonError(1, 1, f"SyntaxError: {exc}", True)
    except (RecursionError, MemoryError):  # CPython's parser stack overflows: `- - - ... x`
        return CPythonError(1, 1, "SyntaxError: the file is nested too deeply", True)
    deepest = _too_deep(tree, source)
    if deepest is None:
        return tree
    line, column = deepest
    return CPythonError(line, column, f"cannot check: an expression is nested more than "
                                      f"{MAX_EXPRESSION_DEPTH:,} levels deep", True)


def _is_limit(message: str) -> bool:
    # "too many nested parentheses", "f-string: expressions nested too deeply",
    # "too many levels of indentation", "source code string cannot contain null bytes"
    return "nested" in message or "too many levels" in message or "null bytes" in message


def _too_deep(tree: ast.AST, source: Union[bytes, str]) -> Optional[tuple[int, int]]:
    """Where an expression first nests deeper than MAX_EXPRESSION_DEPTH, if one does.

    Linear and iterative. Each level of nesting takes at least one character, so a node whose
    lines hold fewer characters than the levels left is not walked: most files are not walked
    at all below their statements.
    """
    ends = line_starts(source)
    last = len(ends) - 1

    def room(node: ast.AST) -> int:   # characters on the node's lines, at most
        first, final = node.lineno, min(node.end_lineno or node.lineno, last)  # type: ignore[attr-defined]
        return ends[final] - ends[max(first, 1) - 1] if first <= last else 0

    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.expr):
            depth += 1
            if depth > MAX_EXPRESSION_DEPTH:
                return node.lineno, node.col_offset + 1
        if hasattr(node, "end_lineno") and room(node) + depth <= MAX_EXPRESSION_DEPTH:
            continue
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))
    return None
