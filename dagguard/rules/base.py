"""What a rule is: metadata (code, name, severity, summary) and a check over the file model."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, ClassVar, Iterable, Optional, Union

import libcst as cst

from dagguard.model.branches import BranchPath
from dagguard.model.arguments import ArgValue
from dagguard.model.dags import DagModel, FileModel

if TYPE_CHECKING:
    from dagguard.config import Settings


SAFE = "safe"
UNSAFE = "unsafe"   # changes when or whether tasks run, or what SQL returns: only with --unsafe-fixes

# What a node is replaced with: a new node, or cst.RemoveFromParent() to drop it.
Replacement = Union[cst.CSTNode, cst.RemovalSentinel]
Edits = tuple[tuple[cst.CSTNode, Replacement], ...]


@dataclass(frozen=True)
class Import:
    """`from module import name`, added by a fix when the file lacks it."""

    module: str
    name: str


@dataclass(frozen=True)
class Fix:
    """A finding's fix (Fixit's model): node replacements in the file's own tree, applied by
    dagguard.engine.fixes, which keeps every byte outside the replaced nodes."""

    description: str                 # one line: what the fix does
    safety: str                      # SAFE or UNSAFE
    # The (node, replacement) pairs, or a function that makes them when the fix is applied:
    # new nodes cost time to build, and most runs apply no fix.
    edits: Union[Edits, Callable[[], Edits]]
    imports: tuple[Import, ...] = ()

    @property
    def replacements(self) -> Edits:
        if callable(self.edits):
            object.__setattr__(self, "edits", self.edits())
        return self.edits  # type: ignore[return-value]


@dataclass(frozen=True)
class Report:
    """What a rule found: the node to point at, the one-line message, the advice."""

    node: cst.CSTNode
    message: str
    help: Optional[str] = None
    dag: Optional[DagModel] = None   # a finding about a DAG: noqa on its first line applies too
    severity: Optional[str] = None   # overrides the rule's default when set
    # The argument holding the risky value: when a factory's default gave it, the help says so.
    argument: Optional[ArgValue] = None
    fix: Optional[Fix] = None


@dataclass(frozen=True)
class RuleContext:
    path: Path
    settings: "Settings"
    now: dt.datetime


@dataclass(frozen=True)
class DagSite:
    """A DAG with a static dag_id, located: what project-wide rules compare across files."""

    dag_id: str
    path: Path
    line: int
    column: int
    end_line: int
    end_column: int
    # Which if/match branches the definition sits in (model/branches.py); set only where the
    # dag_id repeats within the file, to tell a duplicate from its alternative.
    branches: BranchPath = ()


class Rule:
    """A rule checks one file's model. Subclasses set the metadata and implement check()."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]          # "error" or "warning"
    summary: ClassVar[str]
    fixable: ClassVar[bool] = False  # some of its findings carry a Fix

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        return ()


class ProjectRule(Rule):
    """A rule that compares DAGs across all checked files (runs after the per-file pass)."""

    def check_project(self, sites: list[DagSite]) -> Iterable[tuple[DagSite, str, Optional[str]]]:
        """Yield (site, message, help) for each offending DAG."""
        return ()
