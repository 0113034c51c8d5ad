"""Hover: on a diagnostic's range, the rule's page summary (its title, summary and
"What it does" section) and the finding's help."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

_SECTION = re.compile(r"^## What it does\n(?P<body>.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)


@lru_cache(maxsize=None)
def rule_summary(code: str) -> Optional[str]:
    """Markdown for a rule: `DG101 catchup-without-end-date (error)`, its summary, what it does."""
    from dagguard.rules import RULES_BY_CODE
    from dagguard.rules.pages import page_text

    rule = RULES_BY_CODE.get(code)
    if rule is None:
        return None
    parts = [f"**{rule.code} {rule.name}** ({rule.severity}{', fixable' if rule.fixable else ''})", rule.summary]
    page = page_text(code)
    match = _SECTION.search(page) if page else None
    if match:
        parts.append(match.group("body").strip())
    return "\n\n".join(parts)


def hover_text(code: str, help_text: Optional[str]) -> Optional[str]:
    summary = rule_summary(code)
    if summary is None:
        return None
    return f"{summary}\n\nhelp: {help_text}" if help_text else summary
