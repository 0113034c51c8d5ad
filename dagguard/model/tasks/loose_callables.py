"""Task code that no DAG of the file holds, and what it reads from the run's context.

A removed context key fails wherever the code runs, so these need no DAG: `@task` functions no
DAG of the file calls (their DAG may be in another module), the callables of operators made
outside a DAG, the methods Airflow calls with the context on an operator class, the file's
functions given as task or DAG callbacks (called with the context), and any function of the
file that calls `get_current_context()`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from dagguard.model.basics.arguments import Arguments
from dagguard.model.tasks.callable_context import GET_CURRENT_CONTEXT, parameters
from dagguard.model.dags.models import FileModel
from dagguard.model.tasks.python_tasks import CallableFacts, analyse_callable
from dagguard.model.basics.scope import ConstantBinding, FunctionBinding, ImportBinding, Scope, function_scope
from dagguard.model.tasks.task_io import explicit_parameters
from dagguard.model.basics.tree import child_nodes

_CACHE_KEY = "loose_callables"
# Airflow calls `execute(context=...)` by keyword; `pre_execute`, `post_execute`, `poke`,
# `choose_branch` and `execute_complete(context, event=...)` get the context as their first
# argument, whatever its name (sdk/execution_time/task_runner.py, sdk/bases/).
_KEYWORD_CONTEXT = {"execute": "context"}
_METHOD_GIVEN = frozenset({"self", "event"})
# Task and DAG arguments whose functions Airflow calls with the context as their one argument.
CALLBACK_ARGUMENTS = ("on_execute_callback", "on_success_callback", "on_failure_callback",
                      "on_retry_callback", "on_skipped_callback", "pre_execute", "post_execute")


@dataclass(frozen=True)
class LooseCallable:
    label: str                       # "task 'publish'", "CustomOperator.execute()"
    facts: CallableFacts
    # A function of another module (an imported callback): its findings go to where this
    # file names it, as its nodes are in the other module's tree.
    reported_at: Optional[cst.CSTNode] = None


@dataclass(frozen=True)
class _Callback:
    argument: str                    # "on_failure_callback"
    function: cst.FunctionDef
    scope: Scope                     # the scope the function is defined in
    module: cst.Module               # the tree it is in
    node: cst.CSTNode                # its name where this file gives it
    elsewhere: Optional[str]         # the project module defining it; None for this file


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
        context = _method_context(method.function)
        # Its other parameters are its callers' (a parameter named after a removed key is
        # reported: Airflow 2's context filled it).
        yield LooseCallable(label, analyse_callable(method.function, method.scope, file.module,
                                                    _METHOD_GIVEN | context, context_params=context))
    done: set[int] = set()
    for callback in _callbacks(file):
        if id(callback.function) not in done:
            done.add(id(callback.function))
            yield _receiving_context(callback)
    for function in _calling_get_current_context(file):
        if id(function) not in done:
            done.add(id(function))
            yield LooseCallable(f"{function.name.value}()", analyse_callable(
                function, function_scope(function, file.scope), file.module, _given(function),
                context_params=frozenset()))


def _given(function: cst.FunctionDef) -> frozenset[str]:
    """Every named parameter: what Airflow calls a method or callback with is no context lookup."""
    return frozenset(parameters(function))


def _method_context(function: cst.FunctionDef) -> frozenset[str]:
    """The parameter of an operator method that receives the context."""
    keyword = _KEYWORD_CONTEXT.get(function.name.value)
    if keyword is not None:
        return frozenset({keyword})
    positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    return frozenset(positional[1:2])   # after self


def _receiving_context(callback: _Callback) -> LooseCallable:
    """A callback: its first parameter is the context."""
    function = callback.function
    positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    label = f"{callback.argument} {function.name.value}()"
    if callback.elsewhere is not None:
        label += f" (in {callback.elsewhere})"
    facts = analyse_callable(function, function_scope(function, callback.scope), callback.module,
                             _given(function), context_params=frozenset(positional[:1]))
    return LooseCallable(label, facts, callback.node if callback.elsewhere is not None else None)


def _callbacks(file: FileModel) -> Iterator[_Callback]:
    """The file's functions given as callbacks: to its tasks, its DAGs, and the default_args
    its DAG calls write (a same-file dict literal)."""
    sources: list[tuple[Arguments, Scope]] = [(task.args, task.scope) for task in file.every_task()]
    for dag in file.dags:
        sources.append((dag.args, dag.scope))
        if _written_here(dag.args, "default_args", dag.scope):
            sources.append((dag.default_args, dag.scope))
    for args, scope in sources:
        for argument in CALLBACK_ARGUMENTS:
            value = args.get(argument)
            if value is None or value.origin not in ("keyword", "default_args"):
                continue
            node = value.node
            elements = [e.value for e in node.elements] if isinstance(node, (cst.List, cst.Tuple)) else [node]
            for element in elements:
                if isinstance(element, cst.Name):
                    found = _function_named(element, scope, file, argument)
                    if found is not None:
                        yield found


def _function_named(name: cst.Name, scope: Scope, file: FileModel, argument: str) -> Optional[_Callback]:
    """The function `name` is: one of this file, or one a project module defines."""
    binding = scope.single(name.value)
    if isinstance(binding, FunctionBinding):
        return _Callback(argument, binding.node, file.scope, file.module, name, None)
    if not isinstance(binding, ImportBinding):
        return None
    link = scope.project_link()
    index = getattr(link, "index", None)
    found = index.resolve(binding.qualname, getattr(link, "path", None)) if index is not None else None
    if found is None or not isinstance(found.binding, FunctionBinding):
        return None
    return _Callback(argument, found.binding.node, found.module.scope, found.module.module, name,
                     found.module.name)


def _written_here(args: Arguments, name: str, scope: Scope) -> bool:
    """Is the argument a dict literal of this file (in the call, or a constant of the file)?"""
    value = args.get(name)
    if value is None or value.origin != "keyword":
        return False
    node = value.node
    if isinstance(node, cst.Name):
        binding = scope.single(node.value)
        node = binding.value if isinstance(binding, ConstantBinding) else None
    return isinstance(node, cst.Dict) and not any(isinstance(e, cst.StarredDictElement) for e in node.elements)


def _calling_get_current_context(file: FileModel) -> Iterator[cst.FunctionDef]:
    """Functions of the file whose own body calls get_current_context(): they run in a task."""
    if not _imports_get_current_context(file.scope):
        return
    stack: list[tuple[cst.CSTNode, cst.FunctionDef | None]] = [(file.module, None)]
    found: dict[int, cst.FunctionDef] = {}
    while stack:
        node, function = stack.pop()
        if type(node) is cst.FunctionDef:
            function = node  # type: ignore[assignment]
        elif type(node) is cst.Call and function is not None and id(function) not in found:
            func = node.func  # type: ignore[attr-defined]
            name = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None
            if name == "get_current_context":
                found[id(function)] = function
        stack.extend((child, function) for child in child_nodes(node))
    yield from found.values()


def _imports_get_current_context(scope: Scope) -> bool:
    """Does the file import get_current_context, or a module it can be reached from?"""
    for bindings in scope.bindings.values():
        for binding in bindings:
            if isinstance(binding, ImportBinding) and any(
                    q == binding.qualname or q.startswith(binding.qualname + ".") for q in GET_CURRENT_CONTEXT):
                return True
    return False
