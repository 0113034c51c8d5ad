"""What a rule reports: the node, the message, the fix. The rule classes themselves (metadata
and check) live in rules/rule.py, which needs no tree; rules/base.py re-exports both."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Union

import libcst as cst

from dagguard.model.basics.arguments import ArgValue
from dagguard.model.dags.models import DagModel
from dagguard.model.project.origins import Elsewhere

# In a Report's message, where the engine writes the file and line of the report's `made_at`.
MADE_AT = "{made_at}"

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
    # Where the value is made when another file makes it (an imported default_args): the
    # finding is at `node`, in the checked file, and its message names that place at MADE_AT.
    made_at: Optional[Elsewhere] = None
    # Other DAGs the one cause makes risky (the calls of a factory whose body is reported):
    # they are not clean either.
    also_dags: tuple[DagModel, ...] = ()
