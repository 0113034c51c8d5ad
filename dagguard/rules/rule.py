"""What a rule is, without the tree: its metadata, its context, and the cross-file rules' data.

Nothing here imports libcst: a run whose per-file results come from the cache still runs the
cross-file rules (DG302) on the cached DAG sites, and resolves rule selections, without it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Optional

from dagguard.model.dags.branch_path import BranchPath

if TYPE_CHECKING:
    from dagguard.config import Settings
    from dagguard.model.dags.models import FileModel
    from dagguard.rules.reports import Report


def _no_place(path: Optional[Path], module: Any, node: Any) -> str:
    return str(path) if path is not None else "this file"


def _no_line(node: Any) -> Optional[int]:
    return None


@dataclass(frozen=True)
class RuleContext:
    path: Path
    settings: "Settings"
    now: dt.datetime
    # `common/config.py:12`: where a node of this file (path and module None) or of a project
    # module is, for a message naming a place other than the finding's. The engine locates it.
    place_of: Callable[[Optional[Path], Any, Any], str] = _no_place
    # The line of a node of this file as the user sees it (None when it is not in the file).
    line_of: Callable[[Any], Optional[int]] = _no_line


@dataclass(frozen=True)
class DagSite:
    """A DAG with a static dag_id, located: what project-wide rules compare across files."""

    dag_id: str
    path: Path
    line: int
    column: int
    end_line: int
    end_column: int
    # Which if/match branches the definition sits in (model/dags/branches.py); set only where the
    # dag_id repeats within the file, to tell a duplicate from its alternative.
    branches: BranchPath = ()


class Rule:
    """A rule checks one file's model. Subclasses set the metadata and implement check()."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]          # "error" or "warning"
    summary: ClassVar[str]
    fixable: ClassVar[bool] = False  # some of its findings carry a Fix

    def check(self, file: "FileModel", context: RuleContext) -> "Iterable[Report]":
        return ()


class ProjectRule(Rule):
    """A rule that compares DAGs across all checked files (runs after the per-file pass)."""

    def check_project(self, sites: list[DagSite]) -> Iterable[tuple[DagSite, str, Optional[str]]]:
        """Yield (site, message, help) for each offending DAG."""
        return ()
