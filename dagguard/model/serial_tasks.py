"""DAGs whose tasks can only run one at a time: every task is made once, unconditionally, when
the file is parsed, and the dependency graph (model/dependencies.py) is one straight path.

Proving it needs the whole structure: a call the linter cannot see into (a project helper, a
method of an unknown object) may make tasks or dependencies of its own, a loop or an `if` may
make a task many times or not at all, and a mapped task (`.expand(...)`) runs many instances at
once. Any of these in the file, and nothing is proven. Unknown edges the linter misses can only
add order, never parallelism, so a path it does see stays a path.
"""

from __future__ import annotations

import builtins
import sys
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from dagguard.model import airflow_names as names
from dagguard.model.dags import DagModel, FileModel, TaskModel
from dagguard.model.dependencies import TaskGraph, task_graph
from dagguard.model.import_guards import value_on_import
from dagguard.model.scope import ConstantBinding, FunctionBinding, ModuleScope, Scope, function_scope
from dagguard.model.tree import branch_nodes

_LAYOUT_KEY = "serial_task_layout"
# Libraries whose calls make no task of a DAG: Python's own, Airflow's (operators excepted:
# those are tasks the model knows), and the date libraries DAG files use.
_TASKLESS_LIBRARIES = frozenset(sys.stdlib_module_names) | {"airflow", "pendulum", "dateutil"}
_DEPENDENCY_METHODS = frozenset({"set_upstream", "set_downstream"})
_DEPENDENCY_FUNCTIONS = frozenset({"chain", "chain_linear", "cross_downstream"})
_MAPPING_METHODS = frozenset({"partial", "expand", "expand_kwargs"})
_PLAIN_LIBRARIES = _TASKLESS_LIBRARIES - {"airflow"}
_BUILTINS = frozenset(dir(builtins))
_LITERALS = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString, cst.Integer, cst.Float,
             cst.List, cst.Tuple, cst.Set, cst.Dict)

# Where a node runs when the file is parsed, as bits: once (none set), maybe not or many times
# (under a loop, an `if`, a `try`), later if at all (a function's body); and whether it is in a
# task's arguments, whose calls make no task of the DAG (model/dags.py) but may hold tasks.
_ONCE, _GUARDED, _DEFERRED, _IN_TASK_ARGUMENTS = 0, 1, 2, 4


@dataclass(frozen=True)
class _Layout:
    """What the file's parse-time code does, as far as task structure goes."""

    known: bool                     # no call that may make tasks, no dependency set more than once
    made_once: frozenset[int]       # task nodes (by id) made exactly once, unconditionally


def runs_one_task_at_a_time(file: FileModel, dag: DagModel) -> bool:
    """True only when the DAG's tasks are all statically known, none is mapped, and they form
    one chain (a single task counts): within a run no two of them can be ready at once."""
    if dag.factory is not None or not dag.tasks:
        return False  # a DAG without a task the linter sees is one whose tasks it cannot see
    layout = _layout(file)
    if not layout.known or any(id(t.node) not in layout.made_once or _is_mapped(t) for t in dag.tasks):
        return False
    return _is_one_path(task_graph(file, dag))


def _is_mapped(task: TaskModel) -> bool:
    node = task.node
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
        and node.func.attr.value in _MAPPING_METHODS


def _is_one_path(graph: TaskGraph) -> bool:
    downstream: dict[int, list[int]] = {}
    for after, befores in graph.upstream.items():
        if len(befores) > 1:
            return False
        for before in befores:
            downstream.setdefault(before, []).append(after)
    if any(len(afters) > 1 for afters in downstream.values()):
        return False
    first = [key for key in graph.tasks if not graph.upstream.get(key)]
    if len(first) != 1:
        return False
    seen, current = {first[0]}, first[0]
    while downstream.get(current):
        current = downstream[current][0]
        if current in seen:
            return False
        seen.add(current)
    return len(seen) == len(graph.tasks)


def _layout(file: FileModel) -> _Layout:
    found: Optional[_Layout] = file.analyses.get(_LAYOUT_KEY)
    if found is None:
        found = file.analyses[_LAYOUT_KEY] = _Walk(file).run()
    return found


class _Walk:
    """One walk of the whole module, stopping at the first thing that makes the layout unknown."""

    def __init__(self, file: FileModel) -> None:
        self.file = file
        self.task_nodes = {id(t.node) for t in file.every_task()}
        self.dag_functions = {id(d.function) for d in file.dags if d.kind == "decorator" and d.function is not None}
        self.made_once: set[int] = set()
        self.made_otherwise: set[int] = set()

    def run(self) -> _Layout:
        scope = self.file.scope
        stack: list[tuple[cst.CSTNode, Scope, int]] = [
            (stmt, scope.at(i) if isinstance(scope, ModuleScope) else scope, _ONCE)
            for i, stmt in reversed(list(enumerate(self.file.module.body)))
        ]
        while stack:
            node, current, where = stack.pop()
            inner = self.step(node, current, where)
            if inner is None:
                return _Layout(False, frozenset())
            stack.extend(reversed(inner))
        return _Layout(True, frozenset(self.made_once - self.made_otherwise))

    def step(self, node: cst.CSTNode, scope: Scope, where: int) -> Optional[list[tuple[cst.CSTNode, Scope, int]]]:
        """The children to walk next, each with where it runs; None when the layout is unknown."""
        runs = where & ~_IN_TASK_ARGUMENTS
        if id(node) in self.task_nodes:
            (self.made_once if runs == _ONCE else self.made_otherwise).add(id(node))
            return [(c, scope, where | _IN_TASK_ARGUMENTS) for c in branch_nodes(node)]
        if _sets_dependencies(node) and runs != _ONCE:
            return None  # an edge that may be set on some passes only, or never
        if isinstance(node, cst.FunctionDef):
            inner_scope = function_scope(node, scope)
            body_runs = where if id(node) in self.dag_functions else where | _DEFERRED
            return [(d.decorator, scope, where) for d in node.decorators] \
                + [(node.params, scope, where), (node.body, inner_scope, body_runs)]
        if isinstance(node, cst.Lambda):
            return [(node.body, scope, where | _DEFERRED)]
        if isinstance(node, cst.Call) and not where & (_DEFERRED | _IN_TASK_ARGUMENTS) \
                and not self.makes_no_task(node, scope):
            return None
        children = branch_nodes(node)
        guarded = where | _GUARDED
        if isinstance(node, cst.If):
            known = value_on_import(node.test, scope)
            if known is not None:  # `if __name__ == "__main__":` never runs in the DAG processor
                taken = node.body if known else node.orelse
                return [(taken, scope, where)] if taken is not None else []
            return [(node.test, scope, where)] + [(c, scope, guarded) for c in children if c is not node.test]
        if isinstance(node, (cst.For, cst.While)):
            first = node.iter if isinstance(node, cst.For) else node.test
            return [(first, scope, where)] + [(c, scope, guarded) for c in children if c is not first]
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp, cst.Try, cst.Match,
                             cst.IfExp, cst.BooleanOperation)):
            return [(c, scope, guarded) for c in children]
        return [(c, scope, where) for c in children]

    def makes_no_task(self, call: cst.Call, scope: Scope) -> bool:
        """A call that surely adds no task: a builtin, a library's function, a method of a
        literal, of a constant bound to one or of what a builtin or plain library returns
        (`datetime.now().strftime(...)`), `set_upstream`/`set_downstream`, or an `@dag`
        function of the file (whose body is walked)."""
        func = call.func
        if any(_is_function(arg.value, scope) for arg in call.args):
            return False  # `map(make_task, names)`: the callee may call it, and it may make tasks
        if isinstance(func, cst.Name) and func.value in _BUILTINS and not scope.lookup(func.value):
            return True
        if isinstance(func, cst.Attribute) and (func.attr.value in _DEPENDENCY_METHODS
                                                or _is_plain_value(func.value, scope)):
            return True
        if isinstance(func, cst.Name):
            binding = scope.single(func.value)
            if isinstance(binding, FunctionBinding) and id(binding.node) in self.dag_functions:
                return True
        qual = scope.qualname(func)
        return qual is not None and qual.split(".", 1)[0] in _TASKLESS_LIBRARIES \
            and not names.is_airflow_operator(qual)


def _is_function(expr: cst.BaseExpression, scope: Scope) -> bool:
    """A lambda or a function of the file, passed on to be called."""
    return isinstance(expr, cst.Lambda) or (
        isinstance(expr, cst.Name) and isinstance(scope.single(expr.value), FunctionBinding))


def _is_plain_value(expr: cst.BaseExpression, scope: Scope) -> bool:
    """A literal, a name bound once to one, or the result of a builtin's or of a library's call
    other than Airflow's (whose objects, a DAG or a task, have methods that add tasks)."""
    if isinstance(expr, cst.Name):
        binding = scope.single(expr.value)
        return isinstance(binding, ConstantBinding) and isinstance(binding.value, _LITERALS)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name) and func.value in _BUILTINS and not scope.lookup(func.value):
            return True
        qual = scope.qualname(func)
        return qual is not None and qual.split(".", 1)[0] in _PLAIN_LIBRARIES
    return isinstance(expr, _LITERALS)


def _sets_dependencies(node: cst.CSTNode) -> bool:
    """`a >> b`, `a << b`, `a.set_downstream(b)`, `chain(...)`: read generously, by spelling."""
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, (cst.RightShift, cst.LeftShift))
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Attribute):
        return func.attr.value in _DEPENDENCY_METHODS or func.attr.value in _DEPENDENCY_FUNCTIONS
    return isinstance(func, cst.Name) and func.value in _DEPENDENCY_FUNCTIONS
