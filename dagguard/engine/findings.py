"""The finding: one problem at one place, as every reporter and the API see it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


_JSON_KEYS = ("code", "rule", "severity", "path", "line", "column", "end_line", "end_column",
              "message", "help", "dag_id", "fixable")


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    column: int
    code: str
    rule: str
    severity: str                    # "error" or "warning"
    end_line: int
    end_column: int
    message: str
    help: Optional[str] = None
    dag_id: Optional[str] = None
    fixable: bool = False
    fix_safety: Optional[str] = None       # "safe" or "unsafe" when fixable
    fix_description: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: every field, in a stable order."""
        # Every field is a plain value: no asdict() deep copy (a warm run's JSON report is
        # mostly this).
        return {key: getattr(self, key) for key in _JSON_KEYS}


def fix_applies(safety: Optional[str], unsafe_fixes: bool) -> bool:
    """Does a fix of this safety apply in a run with (or without) --unsafe-fixes?"""
    return safety == "safe" or (safety is not None and unsafe_fixes)
