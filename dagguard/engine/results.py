"""What checking gives back: one file's result, and a whole run's. Plain data, no tree, so the
cache, the cross-file rules and the reporters work without libcst."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional

from dagguard.engine.dag_listing import DagSummary
from dagguard.engine.findings import Finding
from dagguard.rules.rule import DagSite

if TYPE_CHECKING:
    from dagguard.rules.base import Fix


@dataclass(frozen=True)
class FileResult:
    path: Path
    findings: tuple[Finding, ...]
    dag_sites: tuple[DagSite, ...] = ()
    dag_count: int = 0
    # Where the DAGs with findings start (line, column): a cross-file rule may flag them too,
    # and a DAG counts once.
    flagged_dags: frozenset[tuple[int, int]] = frozenset()
    noqa: Mapping[int, Optional[frozenset[str]]] = field(default_factory=dict)
    internal_errors: tuple[str, ...] = ()
    imports_airflow: bool = False
    dags: tuple[DagSummary, ...] = ()
    # The project modules its factories and constants were resolved through: a cache must key
    # the result on them too.
    depends_on: frozenset[Path] = frozenset()
    # Kept only when asked (check_source(keep_fixes=True)): the parsed tree (a libcst Module)
    # the fixes' nodes belong to, and each fixable finding with its fix.
    module: Optional[Any] = field(default=None, compare=False, repr=False)
    fixes: tuple[tuple[Finding, "Fix"], ...] = field(default=(), compare=False, repr=False)
    warnings: tuple[str, ...] = ()     # `path:line: message` lines, e.g. a noqa naming no rule
    # For a file that imports airflow and shows no DAG yet looks like a DAG file: why it shows
    # none (dagguard.model.dags.unseen_dags); None for a library module.
    unseen_reason: Optional[str] = None
    # What it imports (dotted names; relative imports as real paths): which files are libraries.
    imports: frozenset[str] = frozenset()
    # Files that would give the project a module it imports but the project lacks (`from common
    # import x` before common.py exists): a cache must check the result again once one appears.
    absent_modules: frozenset[Path] = frozenset()


@dataclass(frozen=True)
class CheckResult:
    findings: tuple[Finding, ...]
    files_checked: int
    dag_count: int
    clean_dag_count: int
    internal_errors: tuple[str, ...] = ()
    # Contents of files that are not on disk (stdin), by shown path, for reporters that quote source.
    sources: Mapping[str, str] = field(default_factory=dict)
    missing_paths: tuple[str, ...] = ()  # given paths that do not exist (exit 2, the others checked)
    # Files that import airflow yet define no DAG the linter can see, and look like DAG files.
    files_without_dags: tuple[str, ...] = ()
    unseen_reasons: tuple[str, ...] = ()   # why, one per file of files_without_dags
    dags: tuple[DagSummary, ...] = ()
    unsafe_fixes: bool = False         # are unsafe fixes applicable in this run (--unsafe-fixes)?
    warnings: tuple[str, ...] = ()
    fixed: int = 0                     # findings fixed by --fix before these were found
    # What --fix left: ruff marks none of it [*] (a fix that applied would have been applied).
    after_fixes: bool = False

    @property
    def files_with_findings(self) -> int:
        return len({f.path for f in self.findings})


def real_cwd() -> str:
    """The working folder with symlinks resolved, as display_path compares against it."""
    return os.path.realpath(os.getcwd())


def display_path(path: Path, cwd: Optional[str] = None) -> str:
    """The path as ruff shows it: relative to the working directory when below it. `cwd`, from
    real_cwd(), saves resolving it again when showing many paths."""
    # The folder is resolved, not the file: a symlink is shown by its own name, not its target's.
    # Strings, not Path objects: combine() shows every file this way, cached or not.
    text = str(path)
    try:
        name = path.name
        absolute = os.path.join(os.path.realpath(os.path.dirname(text) or "."), name) if name \
            else os.path.realpath(text)
        cwd = cwd if cwd is not None else real_cwd()
    except (OSError, ValueError):
        return text
    if absolute == cwd:
        return "."
    below = cwd.rstrip(os.sep) + os.sep
    return absolute[len(below):] if absolute.startswith(below) else text


def syntax_finding(shown: str, line: int, column: int, message: str) -> Finding:
    """A DG000 finding: the file (or folder) could not be read or parsed."""
    from dagguard.rules import SYNTAX_ERROR

    rule = SYNTAX_ERROR
    return Finding(path=shown, line=line, column=column, code=rule.code, rule=rule.name,
                   severity=rule.severity, end_line=line, end_column=column, message=message)
