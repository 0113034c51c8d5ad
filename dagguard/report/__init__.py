"""Formatters: findings in, text out. One module per format."""

from __future__ import annotations

from typing import Callable

from dagguard.engine.runner import CheckResult

Formatter = Callable[[CheckResult, bool], str]

FORMATS = ("text", "json", "sarif", "github")


def formatter(name: str) -> Formatter:
    """The formatter for `name` (imported lazily: only the one in use is loaded)."""
    if name == "text":
        from dagguard.report.text import format_text
        return format_text
    if name == "json":
        from dagguard.report.json_format import format_json
        return format_json
    if name == "sarif":
        from dagguard.report.sarif import format_sarif
        return format_sarif
    if name == "github":
        from dagguard.report.github import format_github
        return format_github
    raise ValueError(f"unknown format {name!r}; choose one of {', '.join(FORMATS)}")
