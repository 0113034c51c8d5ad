"""Blank out large literals of constant data before libcst parses the file.

libcst's native parser costs about 4 KB of memory and tens of microseconds per token: a 7 MB
list of numbers took 116 s and 3.5 GB, of which CPython's parser needs a twentieth. No rule
reads a thousand-element constant container, so such a container, assigned to a name, is
replaced by `(...)` padded to the same lines and columns: everything after it keeps its
position, and the name's value is unknown to the rules.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import Iterator, Optional

from dagguard.engine.source_lines import line_starts

MIN_ELEMENTS = 1000
_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict)
_THREE_ON_ONE_LINE = re.compile(r"[^\r\n]{3}")


def blank_constant_data(source: bytes, tree: ast.Module) -> bytes:
    """`source` with every large constant container assigned to a name blanked out."""
    spans = [node for node in _assigned_values(tree) if _is_large_constant(node)]
    if not spans or not _offsets_are_bytes(source):
        return source
    starts = line_starts(source)
    pieces: list[bytes] = []
    done = 0
    for node in sorted(spans, key=lambda n: (n.lineno, n.col_offset)):
        begin = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[operator]
        if begin < done:
            continue
        blanked = _blanked(source[begin:end].decode("utf-8", errors="replace"))
        if blanked is None:
            continue
        pieces += [source[done:begin], blanked.encode("ascii")]
        done = end
    return b"".join(pieces) + source[done:]


def _blanked(text: str) -> Optional[str]:
    """`(...)` with the text's line breaks and length (in characters), or None if it has no brackets."""
    if len(text) < 5 or text[0] not in "([{" or text[-1] not in ")]}":
        return None
    chars = ["\n" if c == "\n" else "\r" if c == "\r" else " " for c in text]
    chars[0], chars[-1] = "(", ")"
    room = _THREE_ON_ONE_LINE.search("".join(chars), 1, len(chars) - 1)
    if room is None:
        return None
    chars[room.start():room.end()] = "..."
    return "".join(chars)


def _offsets_are_bytes(source: bytes) -> bool:
    # CPython's columns count UTF-8 bytes of the decoded line: the raw bytes only when the file
    # is UTF-8 without a BOM (which CPython strips before counting).
    if source.startswith(b"\xef\xbb\xbf"):
        return False
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError:
        return False
    return encoding == "utf-8"


def _assigned_values(tree: ast.Module) -> Iterator[ast.expr]:
    """The values of assignment statements, in every block of the file, bigger ones only."""
    blocks: list[list[ast.stmt]] = [tree.body]
    while blocks:
        for statement in blocks.pop():
            if isinstance(statement, (ast.Assign, ast.AnnAssign)) and isinstance(statement.value, _CONTAINERS):
                yield statement.value
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list):
                    blocks.append(inner)
            for handler in getattr(statement, "handlers", ()):
                blocks.append(handler.body)
            for case in getattr(statement, "cases", ()):
                blocks.append(case.body)


def _is_large_constant(node: ast.expr) -> bool:
    """A container of at least MIN_ELEMENTS elements in all, every one a constant or such a container."""
    count = 0
    stack: list[Optional[ast.expr]] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Constant):
            count += 1
        elif isinstance(current, ast.UnaryOp) and isinstance(current.operand, ast.Constant):
            count += 1  # -1
        elif isinstance(current, ast.Dict):
            if any(key is None for key in current.keys):
                return False  # **spread
            stack += current.keys
            stack += current.values
        elif isinstance(current, (ast.List, ast.Tuple, ast.Set)):
            stack += current.elts
        else:
            return False
    return count >= MIN_ELEMENTS
