"""What the policy found on one loaded DAG, and each rule's default severity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

# The rules the policy applies and their severities (the rule classes' own: a test compares them,
# so this module need not import the rules, which load libcst).
POLICY_RULES: dict[str, str] = {
    "DG101": "error",
    "DG102": "warning",
    "DG103": "warning",
    "DG107": "warning",
    "DG206": "error",
    "DG303": "error",
}


@dataclass(frozen=True)
class Finding:
    """One rule's finding on a loaded DAG: the linter's code, message and help."""

    code: str
    message: str
    help: Optional[str] = None

    def line(self) -> str:
        """`DG101 DAG 'x' enables catchup ...`, the help indented below, as the linter prints it."""
        return f"{self.code} {self.message}" + (f"\n  help: {self.help}" if self.help else "")
