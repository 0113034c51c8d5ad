"""The doctor checks, registered in one place; each module holds one check.

A check is a function `(CheckContext) -> list[Finding]` with a CODE and a NAME. Checks run in
this order, so a later check (queued-never-scheduled) can skip runs an earlier one explains.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from dagguard.doctor.checks import (
    catchup_flood,
    paused_backfill_holding_runs,
    queued_never_scheduled,
    stuck_backfill_runs,
)
from dagguard.doctor.checks.context import CheckContext
from dagguard.doctor.model import Finding


@dataclass(frozen=True)
class Check:
    """A registered check: its stable code, kebab-case name and function."""

    code: str
    name: str
    summary: str
    run: Callable[[CheckContext], list[Finding]]


CHECKS: tuple[Check, ...] = tuple(
    Check(module.CODE, module.NAME, module.SUMMARY, module.run)
    for module in (
        stuck_backfill_runs,
        paused_backfill_holding_runs,
        catchup_flood,
        queued_never_scheduled,
    )
)

CHECK_NAMES: tuple[str, ...] = tuple(check.name for check in CHECKS)

__all__ = ["CHECKS", "CHECK_NAMES", "Check", "CheckContext"]
