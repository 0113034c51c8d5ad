"""Task code that no DAG of the file holds, and what it reads from the run's context.

A removed context key fails wherever the code runs, so these need no DAG: `@task` functions no
DAG of the file calls (their DAG may be in another module), the callables of operators made
outside a DAG, and the methods Airflow calls with the context on an operator class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from dagguard.model.dags import FileModel
from dagguard.model.python_tasks import CallableFacts, analyse_callable
from dagguard.model.task_io import explicit_parameters

_CACHE_KEY = "loose_callables"
# Airflow calls `execute(context=...)` and `execute_complete(context=..., event=...)`.
_METHOD_CONTEXT = frozenset({"context"})
_METHOD_GIVEN = frozenset({"self", "context", "event"})


@dataclass(frozen=True)
class LooseCallable:
    label: str                       # "task 'publish'", "CustomOperator.execute()"
    facts: CallableFacts


def loose_callables(file: FileModel) -> list[LooseCallable]:
    """The file's loose task code, analysed once (cached on the file model)."""
    found = file.analyses.get(_CACHE_KEY)
    if found is None:
        found = list(_analyse(file))
        file.analyses[_CACHE_KEY] = found
    return found


def _analyse(file: FileModel) -> Iterator[LooseCallable]:
    # Operators made in a loop share their callable: analyse each (callable, given) once.
    analysed: dict[tuple[int, frozenset[str]], CallableFacts] = {}
    for task in file.loose_tasks:
        if task.callable is None or task.callable_scope is None:
            continue
        # A @task function's callers are not in this file: none of its parameters is known given.
        given = frozenset() if task.kind == "taskflow" else explicit_parameters(task)
        key = (id(task.callable), given)
        if key not in analysed:
            analysed[key] = analyse_callable(task.callable, task.callable_scope, file.module, given)
        yield LooseCallable(task.label, analysed[key])
    for method in file.operator_methods:
        label = f"{method.class_name}.{method.function.name.value}()"
        yield LooseCallable(label, analyse_callable(method.function, method.scope, file.module,
                                                    _METHOD_GIVEN, context_params=_METHOD_CONTEXT))
