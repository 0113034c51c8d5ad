"""Which checked files count as DAG files whose DAGs went unseen, and why (the summary's count
and `dagguard dags --unseen`). Plain data from each file's result: no tree, no libcst.

A file counts when it imports airflow, shows no DAG, looks like a DAG file (its result carries
the reason: DAG-construction code, or a place in the DAGs folder) and no other checked file
imports it or resolves a factory or constant through it (then it is their library).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from dagguard.engine.results import FileResult

MAX_MODULE_DEPTH = 8       # dotted names longer than this are not matched against a file's path


def unseen_files(results: Sequence[FileResult]) -> list[tuple[FileResult, str]]:
    """(result, reason) for each file whose DAGs went unseen, in the results' order."""
    candidates = [r for r in results if r.imports_airflow and not r.dag_count and r.unseen_reason is not None]
    if not candidates:
        return []
    used = {str(module) for r in results for module in r.depends_on}
    # Files import the same names (`airflow.models` in most): each name's prefixes are made once.
    by_name: dict[str, list[Path]] = {}
    for result in results:
        for name in result.imports:
            by_name.setdefault(name, []).append(result.path)
    importers: dict[str, set[Path]] = {}
    for name, paths in by_name.items():
        for prefix in _prefixes(name):
            importers.setdefault(prefix, set()).update(paths)
    found = []
    for result in candidates:
        real = os.path.realpath(result.path)
        if real in used or _imported_by_another(result.path, real, importers):
            continue
        found.append((result, result.unseen_reason))
    return found


def _prefixes(name: str) -> list[str]:
    """`a.b.c` -> a, a.b, a.b.c (importing a.b.c runs a/__init__.py and a/b/__init__.py too);
    a relative import's path is itself."""
    if os.sep in name or "/" in name:
        return [name]
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]


def _imported_by_another(path: Path, real: str, importers: dict[str, set[Path]]) -> bool:
    """Does another checked file import this one, by a relative import (its real path) or an
    absolute one (a dotted name its path ends with: `lib.tasks` for .../lib/tasks.py)?"""
    module = Path(real).with_suffix("")
    if module.name == "__init__":
        module = module.parent
    names = [str(module)]
    parts = module.parts
    names.extend(".".join(parts[-depth:]) for depth in range(1, min(len(parts) - 1, MAX_MODULE_DEPTH) + 1))
    return any(importers.get(name, set()) - {path} for name in names)
