"""Where each line of a source starts: CPython's positions are (line, column), slicing wants
offsets."""

from __future__ import annotations

import re
from typing import Union

_LINE_ENDS = {str: re.compile(r"\r\n|\r|\n"), bytes: re.compile(rb"\r\n|\r|\n")}


def line_starts(source: Union[bytes, str]) -> list[int]:
    """The offset at which each line starts, then the source's length: line N (1-based) is
    source[starts[N - 1]:starts[N]]. Lines end as CPython ends them (\\n, \\r\\n, \\r), not as
    str.splitlines does: a form feed or U+2028 in a str does not end a line."""
    ends = _LINE_ENDS[bytes if isinstance(source, (bytes, bytearray)) else str]
    starts = [0, *(m.end() for m in ends.finditer(source))]
    if starts[-1] != len(source):
        starts.append(len(source))
    return starts
