"""DG000: the file cannot be parsed. The engine reports it; the class carries the metadata."""

from __future__ import annotations

from dagguard.rules.rule import Rule  # tree-free: a cached run reports unreadable folders


class SyntaxError_(Rule):
    code = "DG000"
    name = "syntax-error"
    severity = "error"
    summary = "The file cannot be parsed, so nothing in it was checked"
