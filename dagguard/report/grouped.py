"""ruff's grouped shape: each file's name once, its findings indented below it."""

from __future__ import annotations

from itertools import groupby

from dagguard.engine.results import CheckResult
from dagguard.report.text import BOLD, CYAN, code_style, fix_marker, help_line, paint, with_summary


def format_grouped(result: CheckResult, color: bool, summary: bool = True) -> str:
    lines: list[str] = []
    for path, findings in groupby(result.findings, key=lambda f: f.path):
        group = list(findings)
        lines.append(paint(path, color, BOLD) + paint(":", color, CYAN))
        # As ruff: line numbers right-aligned, columns left-aligned, each to the file's widest.
        rows = max(len(str(f.line)) for f in group)
        columns = max(len(str(f.column)) for f in group)
        for f in group:
            position = f"{f.line:>{rows}}:{f.column:<{columns}}"
            lines.append(f"  {position} {paint(f.code, color, BOLD, code_style(f))} {fix_marker(f, result)}{f.message}")
            lines.extend(help_line(f, color, indent="    "))
        lines.append("")
    return with_summary(lines, result, color, summary)
