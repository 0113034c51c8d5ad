"""The body of a @task function another project module defines, read for a DAG file that calls it.

The builder makes the call a task of the calling DAG and leaves its body to its own module, where
it is a loose task: no DAG, so no schedule to judge it by. What only the calling DAG can decide
(DG202: is a clock read a problem for a DAG on a recurring schedule?) is read here, in the
function's own module, and reported in the DAG file at the call, naming where the body does it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from dagguard.model.basics.scope import function_scope
from dagguard.model.dags.models import FileModel, TaskModel
from dagguard.model.project.origins import Elsewhere, elsewhere
from dagguard.model.tasks.python_tasks import CallableFacts, analyse_callable
from dagguard.model.tasks.task_io import explicit_parameters

_CACHE_KEY = "imported_callables"


@dataclass(frozen=True)
class ImportedCallable:
    """An imported @task function's facts, and where it is defined (its file and tree)."""

    facts: CallableFacts
    home: Elsewhere                  # the FunctionDef, its module's path and tree

    def at(self, node: cst.CSTNode) -> Elsewhere:
        """A node of the function's body, placed in its module (for a finding's message)."""
        return Elsewhere(node, self.home.path, self.home.module)


def imported_callable(file: FileModel, task: TaskModel) -> Optional[ImportedCallable]:
    """The facts of the imported @task function `task` calls, read in its own module with the
    call's arguments as the parameters it passes (once per task, cached on the file model).
    None for a task whose callable is this file's, or whose module is not in the project index."""
    imported = task.imported
    if imported is None:
        return None
    cache: dict[int, Optional[ImportedCallable]] = file.analyses.setdefault(_CACHE_KEY, {})
    if id(task) in cache:
        return cache[id(task)]
    home = elsewhere(imported.function, imported.scope, file.scope)
    found = None
    if home is not None:
        facts = analyse_callable(imported.function, function_scope(imported.function, imported.scope), home.module,
                                 explicit_parameters(task, imported.function))
        found = ImportedCallable(facts, home)
    cache[id(task)] = found
    return found
