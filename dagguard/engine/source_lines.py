"""Where each line of a source starts: CPython's positions are (line, column), slicing wants
offsets."""

from __future__ import annotations

from itertools import accumulate
from typing import Union


def line_starts(source: Union[bytes, str]) -> list[int]:
    """The offset at which each line starts, then the source's length: line N (1-based) is
    source[starts[N - 1]:starts[N]]. Lines end as CPython ends them (\\n, \\r\\n, \\r)."""
    return [0, *accumulate(len(line) for line in source.splitlines(keepends=True))]
