"""Which tasks of a DAG run before which: `>>`, `<<`, `chain(...)`, `set_upstream(...)` and the
XComs a task is handed (a TaskFlow call's arguments, `.output`, `XComArg(op)`).

Read from the file's libcst tree on first use and cached on the FileModel, so every rule asks
the same graph. An operand that does not resolve to a task of the file (a loop variable, a
TaskGroup, a task from another module) adds no edge: rules that need an upstream task to stay
silent then report as they would without the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional

import libcst as cst

from dagguard.model.dags.models import DagModel, FileModel, TaskModel
from dagguard.model.basics.scope import ConstantBinding, ModuleScope, Scope, function_scope
from dagguard.model.basics.tree import branch_nodes

CHAIN_FUNCTIONS = frozenset({
    "airflow.sdk.chain", "airflow.sdk.bases.operator.chain", "airflow.models.baseoperator.chain",
    "airflow.models.chain", "airflow.utils.helpers.chain",
})
CHAIN_LINEAR_FUNCTIONS = frozenset({
    "airflow.sdk.chain_linear", "airflow.sdk.bases.operator.chain_linear",
    "airflow.models.baseoperator.chain_linear",
})
CROSS_DOWNSTREAM_FUNCTIONS = frozenset({
    "airflow.sdk.cross_downstream", "airflow.sdk.bases.operator.cross_downstream",
    "airflow.models.baseoperator.cross_downstream", "airflow.utils.helpers.cross_downstream",
})
XCOM_ARG_CLASSES = frozenset({
    "airflow.sdk.XComArg", "airflow.sdk.definitions.xcom_arg.XComArg", "airflow.models.xcom_arg.XComArg",
    "airflow.models.XComArg",
})
_SHIFTS = {cst.RightShift: "downstream", cst.LeftShift: "upstream"}
_INDEX_KEY = "task_index"
_GRAPH_KEY = "task_graphs"
MAX_NAME_DEPTH = 8


@dataclass(frozen=True)
class IndexedTask:
    dag: DagModel
    task: TaskModel


@dataclass
class TaskGraph:
    """One DAG's task dependencies: for each task (by id of its node), its direct upstream tasks."""

    tasks: dict[int, TaskModel]
    # Direct upstream tasks in the order their edges were found (dicts as ordered sets).
    upstream: dict[int, dict[int, None]] = field(default_factory=dict)

    def add_edge(self, before: TaskModel, after: TaskModel) -> None:
        if before is not after and id(before.node) in self.tasks and id(after.node) in self.tasks:
            self.upstream.setdefault(id(after.node), {})[id(before.node)] = None

    def ancestors(self, task: TaskModel) -> list[TaskModel]:
        """Every task that runs before `task` in a run of the DAG, nearest first."""
        found: list[TaskModel] = []
        seen = {id(task.node)}
        frontier = [id(task.node)]
        while frontier:
            following: list[int] = []
            for key in frontier:
                for before in self.upstream.get(key, {}):
                    if before not in seen:
                        seen.add(before)
                        found.append(self.tasks[before])
                        following.append(before)
            frontier = following
        return found


def task_index(file: FileModel) -> dict[int, IndexedTask]:
    """Every task of the file's DAGs by the id of its node (the operator call or TaskFlow call)."""
    found: Optional[dict[int, IndexedTask]] = file.analyses.get(_INDEX_KEY)
    if found is None:
        found = {id(task.node): IndexedTask(dag, task) for dag in file.dags for task in dag.tasks}
        file.analyses[_INDEX_KEY] = found
    return found


def xcom_producer(file: FileModel, expr: cst.BaseExpression, scope: Scope) -> Optional[TaskModel]:
    """The task whose XCom `expr` is when the DAG runs: a TaskFlow call (`report()`), a task's
    `.output`, `XComArg(op)`, a key of one (`report()["total"]`), or a name bound to one."""
    index = task_index(file)
    for _ in range(MAX_NAME_DEPTH):
        kind = type(expr)
        if kind is cst.Call:
            found = index.get(id(expr))
            if found is not None:
                return found.task
            if expr.args and expr.args[0].keyword is None \
                    and scope.resolves_to(expr.func, XCOM_ARG_CLASSES):  # type: ignore[attr-defined]
                return _task_named(file, expr.args[0].value, scope)  # type: ignore[attr-defined]
            return None
        if kind is cst.Subscript:
            expr = expr.value  # type: ignore[attr-defined]
        elif kind is cst.Attribute and expr.attr.value == "output":  # type: ignore[attr-defined]
            return _task_named(file, expr.value, scope)  # type: ignore[attr-defined]
        elif kind is cst.Name:
            binding = scope.single(expr.value)  # type: ignore[attr-defined]
            if not isinstance(binding, ConstantBinding):
                return None
            expr = binding.value
        else:
            return None
    return None


def _task_named(file: FileModel, expr: cst.BaseExpression, scope: Scope) -> Optional[TaskModel]:
    """The task an operator expression is: its call, or a name bound to it."""
    for _ in range(MAX_NAME_DEPTH):
        if isinstance(expr, cst.Name):
            binding = scope.single(expr.value)
            if not isinstance(binding, ConstantBinding):
                return None
            expr = binding.value
        else:
            found = task_index(file).get(id(expr))
            return found.task if found is not None else None
    return None


def task_graph(file: FileModel, dag: DagModel) -> TaskGraph:
    """The DAG's dependency graph, built for the whole file on first use."""
    graphs: Optional[dict[int, TaskGraph]] = file.analyses.get(_GRAPH_KEY)
    if graphs is None:
        graphs = _build_graphs(file)
        file.analyses[_GRAPH_KEY] = graphs
    return graphs[id(dag)]


def _build_graphs(file: FileModel) -> dict[int, TaskGraph]:
    index = task_index(file)
    graphs = {id(dag): TaskGraph({id(task.node): task for task in dag.tasks}) for dag in file.dags}
    builder = _EdgeBuilder(file, index, graphs)
    for entry in index.values():
        builder.xcom_edges(entry)
    builder.walk()
    return graphs


class _EdgeBuilder:
    """Finds dependency statements in one walk of the module and records their edges."""

    def __init__(self, file: FileModel, index: dict[int, IndexedTask], graphs: dict[int, TaskGraph]) -> None:
        self.file = file
        self.index = index
        self.graphs = graphs

    def edge(self, before: TaskModel, after: TaskModel) -> None:
        first, second = self.index.get(id(before.node)), self.index.get(id(after.node))
        if first is not None and second is not None and first.dag is second.dag:
            self.graphs[id(first.dag)].add_edge(before, after)

    def edges(self, before: list[TaskModel], after: list[TaskModel]) -> None:
        for one in before:
            for other in after:
                self.edge(one, other)

    def xcom_edges(self, entry: IndexedTask) -> None:
        """A task handed another task's XCom (in an argument, a list or a dict of one) runs after it."""
        node = entry.task.node
        if not isinstance(node, cst.Call):
            return
        pending: list[cst.BaseExpression] = [arg.value for arg in node.args]
        while pending:
            expr = pending.pop()
            producer = xcom_producer(self.file, expr, entry.task.scope)
            if producer is not None:
                self.edge(producer, entry.task)
            elif isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
                pending.extend(e.value for e in expr.elements)
            elif isinstance(expr, cst.Dict):
                pending.extend(e.value for e in expr.elements)

    def walk(self) -> None:
        scope = self.file.scope
        stack: list[tuple[cst.CSTNode, Scope]] = [
            (stmt, scope.at(i) if isinstance(scope, ModuleScope) else scope)
            for i, stmt in reversed(list(enumerate(self.file.module.body)))
        ]
        while stack:
            node, current = stack.pop()
            kind = type(node)
            if kind is cst.FunctionDef:
                inner = function_scope(node, current)  # type: ignore[arg-type]
                stack.append((node.body, inner))  # type: ignore[attr-defined]
                continue
            if kind is cst.ClassDef or kind is cst.Lambda:
                continue  # runs later, or never at parse time
            if kind is cst.BinaryOperation and type(node.operator) in _SHIFTS:  # type: ignore[attr-defined]
                self.shift(node, current)  # type: ignore[arg-type]
            elif kind is cst.Call:
                self.call(node, current)  # type: ignore[arg-type]
            stack.extend((child, current) for child in reversed(branch_nodes(node)))

    def operand(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> list[TaskModel]:
        """The tasks an operand of `>>` or `chain` stands for (none when unknown)."""
        if depth > MAX_NAME_DEPTH:
            return []
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            return [t for e in expr.elements if not isinstance(e, cst.StarredElement)
                    for t in self.operand(e.value, scope, depth + 1)]
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return self.operand(expr.elt, scope, depth + 1)
        if isinstance(expr, cst.BinaryOperation) and type(expr.operator) in _SHIFTS:
            return self.operand(expr.right, scope, depth + 1)  # `a >> b` is b
        if isinstance(expr, cst.Name):
            binding = scope.single(expr.value)
            return self.operand(binding.value, scope, depth + 1) if isinstance(binding, ConstantBinding) else []
        producer = xcom_producer(self.file, expr, scope)
        return [producer] if producer is not None else []

    def shift(self, node: cst.BinaryOperation, scope: Scope) -> None:
        left = self.operand(node.left, scope)
        right = self.operand(node.right, scope)
        if _SHIFTS[type(node.operator)] == "downstream":
            self.edges(left, right)
        else:
            self.edges(right, left)

    def call(self, node: cst.Call, scope: Scope) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("set_upstream", "set_downstream") and node.args:
            owner = self.operand(func.value, scope)
            other = self.operand(node.args[0].value, scope)
            if func.attr.value == "set_downstream":
                self.edges(owner, other)
            else:
                self.edges(other, owner)
            return
        if any(arg.keyword is not None for arg in node.args):
            return
        if scope.resolves_to(func, CHAIN_FUNCTIONS):
            for before, after in _pairs(_chained(node, scope)):
                self.chain_pair(before, after, scope)
        elif scope.resolves_to(func, CHAIN_LINEAR_FUNCTIONS):
            for before, after in _pairs(_chained(node, scope)):
                self.edges(self.operand(before, scope), self.operand(after, scope))
        elif any(arg.star for arg in node.args):
            return
        elif scope.resolves_to(func, CROSS_DOWNSTREAM_FUNCTIONS) and len(node.args) == 2:
            self.edges(self.operand(node.args[0].value, scope), self.operand(node.args[1].value, scope))

    def chain_pair(self, before: cst.BaseExpression, after: cst.BaseExpression, scope: Scope) -> None:
        """chain(): two lists of one length link element by element; otherwise every pair."""
        if isinstance(before, (cst.List, cst.Tuple)) and isinstance(after, (cst.List, cst.Tuple)):
            if len(before.elements) != len(after.elements):
                return  # Airflow raises on this
            for one, other in zip(before.elements, after.elements):
                self.edges(self.operand(one.value, scope), self.operand(other.value, scope))
            return
        self.edges(self.operand(before, scope), self.operand(after, scope))


def _chained(call: cst.Call, scope: Scope) -> list[cst.BaseExpression]:
    """chain()'s operands in order, `*[a, b]` and `*steps` (a name bound once to a list or tuple
    display) spread as Airflow spreads them; none when a spread operand is not such a display
    (`chain(*[make(i) for i in ...])`): its neighbours' order is unknown."""
    values: list[cst.BaseExpression] = []
    for arg in call.args:
        if not arg.star:
            values.append(arg.value)
            continue
        if arg.star != "*":
            return []   # `**mapping`: Airflow's chain takes no keywords
        spread = arg.value
        for _ in range(MAX_NAME_DEPTH):
            binding = scope.single(spread.value) if isinstance(spread, cst.Name) else None
            if not isinstance(binding, ConstantBinding):
                break
            spread = binding.value
        if not isinstance(spread, (cst.List, cst.Tuple)) \
                or any(isinstance(element, cst.StarredElement) for element in spread.elements):
            return []
        values.extend(element.value for element in spread.elements)
    return values


def _pairs(values: list[cst.BaseExpression]) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression]]:
    return zip(values, values[1:])
