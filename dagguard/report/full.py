"""ruff's full shape: each finding with the source lines around it and a caret under it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping, Optional

from dagguard.engine.findings import Finding
from dagguard.engine.results import CheckResult
from dagguard.report.text import BOLD, CYAN, code_style, fix_marker, paint, with_summary

CONTEXT_LINES = 2
_NEWLINE = re.compile(r"\r\n?|\n")  # Python's line ends, so numbers match the findings'


class _Sources:
    """Each file's lines, read once; stdin's come with the result."""

    def __init__(self, given: Mapping[str, str]) -> None:
        self._lines: dict[str, Optional[list[str]]] = {path: _NEWLINE.split(text) for path, text in given.items()}

    def lines(self, path: str) -> Optional[list[str]]:
        if path not in self._lines:
            try:
                self._lines[path] = _NEWLINE.split(Path(path).read_bytes().decode("utf-8", errors="replace"))
            except OSError:
                self._lines[path] = None
        return self._lines[path]


def _caret(line: str, finding: Finding) -> str:
    start = min(finding.column - 1, len(line))
    end = finding.end_column - 1 if finding.end_line == finding.line else len(line)
    pad = "".join(c if c == "\t" else " " for c in line[:start])  # tabs keep the caret aligned
    return pad + "^" * max(end - start, 1)


def _last_line(finding: Finding, lines: list[str]) -> int:
    # A finding about a whole DAG spans its definition: the lines around its start are enough.
    last = min(finding.line + CONTEXT_LINES, len(lines))
    while last > finding.line and not lines[last - 1].strip():
        last -= 1
    return last


def _snippet(finding: Finding, lines: list[str], color: bool) -> list[str]:
    if not 1 <= finding.line <= len(lines):
        return []
    first = max(finding.line - CONTEXT_LINES, 1)
    last = _last_line(finding, lines)
    width = len(str(last))
    bar = paint(" " * width + " |", color, CYAN)
    out = [bar]
    for number in range(first, last + 1):
        text = lines[number - 1]
        out.append(paint(f"{number:>{width}} |", color, CYAN) + (f" {text}" if text else ""))
        if number == finding.line:
            out.append(f"{bar} {paint(_caret(text, finding), color, BOLD, code_style(finding))}")
    out.append(bar)
    return out


def format_full(result: CheckResult, color: bool, summary: bool = True) -> str:
    sources = _Sources(result.sources)
    lines: list[str] = []
    for f in result.findings:
        lines.append(f"{paint(f.code, color, BOLD, code_style(f))} {fix_marker(f, result)}{paint(f.message, color, BOLD)}")
        source = sources.lines(f.path)
        width = len(str(_last_line(f, source))) if source else 1
        lines.append(f"{' ' * width}{paint('-->', color, CYAN)} {f.path}:{f.line}:{f.column}")
        lines.extend(_snippet(f, source, color) if source is not None else [])
        if f.help:
            lines.append(f"{paint('help', color, BOLD)}: {f.help}")
        lines.append("")
    return with_summary(lines, result, color, summary)
