"""Formatters: findings in, text out. One module per format, imported only when chosen."""

from __future__ import annotations

from importlib import import_module
from typing import Callable

from dagguard.engine.results import CheckResult

Formatter = Callable[[CheckResult, bool], str]

# ruff's --output-format names -> (module, function).
_FORMATTERS: dict[str, tuple[str, str]] = {
    "concise": ("text", "format_text"),
    "full": ("full", "format_full"),
    "json": ("json_format", "format_json"),
    "json-lines": ("json_format", "format_json_lines"),
    "junit": ("junit", "format_junit"),
    "grouped": ("grouped", "format_grouped"),
    "github": ("github", "format_github"),
    "gitlab": ("gitlab", "format_gitlab"),
    "sarif": ("sarif", "format_sarif"),
    "rdjson": ("rdjson", "format_rdjson"),
}
FORMATS = tuple(_FORMATTERS)
ALIASES = {"text": "concise"}  # dagguard's name before --output-format
# The formats people read: coloured on a terminal, followed by a summary and statistics.
HUMAN_FORMATS = frozenset({"concise", "full", "grouped"})


def canonical_format(name: str) -> str:
    """`name` with aliases resolved; ValueError for an unknown format."""
    name = ALIASES.get(name, name)
    if name not in _FORMATTERS:
        raise ValueError(f"unknown output format {name!r}; choose one of {', '.join(FORMATS)}")
    return name


def formatter(name: str) -> Formatter:
    """The formatter for `name` (imported lazily: only the one in use is loaded)."""
    module, function = _FORMATTERS[canonical_format(name)]
    return getattr(import_module(f"dagguard.report.{module}"), function)
