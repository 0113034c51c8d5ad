"""`# noqa` comments: bare (silence everything on the line) or with a list of codes."""

from __future__ import annotations

import re
from typing import Mapping, Optional

# flake8/ruff syntax: `# noqa`, `# noqa: DG101`, `# noqa: DG101, DG102`, `#noqa:DG101 DG102`.
_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[,\s]+[A-Za-z]+[0-9]+)*))?",
    re.IGNORECASE,
)
_CODE = re.compile(r"[A-Za-z]+[0-9]+")

ALL = None  # a bare noqa silences every code


def parse_noqa(text: str) -> Mapping[int, Optional[frozenset[str]]]:
    """Map 1-based line numbers to the codes their noqa comment names (None: all codes)."""
    if "noqa" not in text and "NOQA" not in text.upper():
        return {}
    found: dict[int, Optional[frozenset[str]]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if "#" not in line:
            continue
        match = _NOQA.search(line)
        if match is None:
            continue
        codes = match.group("codes")
        found[number] = frozenset(c.upper() for c in _CODE.findall(codes)) if codes else ALL
    return found


def is_suppressed(noqa: Mapping[int, Optional[frozenset[str]]], code: str, lines: tuple[int, ...]) -> bool:
    """True when a noqa comment on any of `lines` covers `code`."""
    for line in lines:
        if line in noqa:
            codes = noqa[line]
            if codes is ALL or code in codes:
                return True
    return False
