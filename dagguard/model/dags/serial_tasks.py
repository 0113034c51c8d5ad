"""How many of a DAG's tasks one run can have running at once, when the linter can prove it:
every task is made once, unconditionally, when the file is parsed, and the bound is the widest
set of tasks of the dependency graph (model/dags/dependencies.py) none of which runs before another
(its widest antichain: 1 for one straight path).

Proving it needs the whole structure: a call the linter cannot see into (a project helper, a
method of an unknown object) may make tasks or dependencies of its own, a loop or an `if` may
make a task many times or not at all, and a mapped task (`.expand(...)`) runs many instances at
once. Any of these in the file, and nothing is proven. Unknown edges the linter misses can only
add order, never parallelism, so the bound it computes is never too small. A trigger rule that
may start a task before all its upstream tasks are done (`always`, `one_success`, `one_failed`,
`one_done`, one not statically known) takes its task's incoming edges out of the order.
"""

from __future__ import annotations

import builtins
import sys
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from dagguard.model.basics import airflow_names as names
from dagguard.model.dags.models import DagModel, FileModel, TaskModel
from dagguard.model.dags.antichains import MAX_TASKS, WAITING_RULES as _WAITING_RULES, widest_antichain
from dagguard.model.dags.dependencies import TaskGraph, task_graph
from dagguard.model.basics.import_guards import value_on_import
from dagguard.model.basics.loop_passes import Bindings, loop_passes, decided_by_pass
from dagguard.model.basics.scope import ConstantBinding, FunctionBinding, ModuleScope, Scope, function_scope
from dagguard.model.basics.tree import branch_nodes

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
# (under a loop, an `if`, a `try`), later if at all (a function's body); whether it is in a
# task's arguments, whose calls make no task of the DAG (model/dags/builder.py) but may hold tasks; and
# whether it is in a loop walked once per pass (model/basics/loop_passes.py): a task there is made on
# the passes it is walked on, but an edge there may join different tasks on each pass.
_ONCE, _GUARDED, _DEFERRED, _IN_TASK_ARGUMENTS, _UNROLLED = 0, 1, 2, 4, 8


@dataclass(frozen=True)
class _Layout:
    """What the file's parse-time code does, as far as task structure goes."""

    known: bool                     # no call that may make tasks, no dependency set more than once
    made_once: frozenset[int]       # task nodes (by id) made exactly once, unconditionally
    # DAGs (by id) whose body calls a helper function of the file: it may make tasks the active
    # DAG adopts, which the model does not give that DAG; other DAGs are not touched by it.
    helper_callers: frozenset[int] = frozenset()


def concurrent_task_bound(file: FileModel, dag: DagModel) -> Optional[int]:
    """The most tasks of one run of the DAG that can be running at once, when every task is
    statically known and none is mapped; None when that cannot be proven."""
    if dag.factory is not None or not dag.tasks or len(dag.tasks) > MAX_TASKS:
        return None  # a DAG without a task the linter sees is one whose tasks it cannot see
    layout = _layout(file)
    if not layout.known or id(dag) in layout.helper_callers or any(id(t.node) not in layout.made_once or _is_mapped(t) for t in dag.tasks):
        return None
    return _widest_antichain(task_graph(file, dag), dag)


def _is_mapped(task: TaskModel) -> bool:
    node = task.node
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
        and node.func.attr.value in _MAPPING_METHODS


def _widest_antichain(graph: TaskGraph, dag: DagModel) -> Optional[int]:
    """The most tasks no two of which are ordered (Dilworth: the tasks less the largest
    matching of 'runs before' pairs); None for a cycle, which Airflow refuses to load."""
    keys = list(graph.tasks)
    position = {key: i for i, key in enumerate(keys)}
    downstream: list[list[int]] = [[] for _ in keys]
    for after, befores in graph.upstream.items():
        if _starts_early(graph.tasks[after], dag):
            continue  # it may run beside its upstream tasks: they do not order it
        for before in befores:
            downstream[position[before]].append(position[after])
    return widest_antichain(downstream)


def _starts_early(task: TaskModel, dag: DagModel) -> bool:
    """May the task start while one of its upstream tasks is still running?"""
    given = task.args.get("trigger_rule") or dag.default_args.get("trigger_rule")
    if given is None:
        return False
    rule = _trigger_rule_name(given.value, given.node, given.read_in(task.scope))
    # Not statically known, `always`, or a `one_*` rule (with one upstream task seen, another the
    # linter misses would let it start early): it may run beside its upstream tasks.
    return rule is None or rule not in _WAITING_RULES


def _trigger_rule_name(value: object, node: cst.BaseExpression, scope: Scope) -> Optional[str]:
    """`"all_done"`, or `TriggerRule.ALL_DONE` through the file's imports."""
    if isinstance(value, str):
        return value.lower()
    if isinstance(node, cst.Attribute):
        owner = scope.qualname(node.value)
        if owner is not None and owner.endswith(".TriggerRule"):
            return node.attr.value.lower()
    return None


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
        self.helper_callers: set[int] = set()
        self.deferred_scopes: set[int] = set()  # the scopes of function bodies run later, if at all
        # The DAG whose code a block is, by the block's id: a `with` block's body, an @dag function's.
        self.dag_of_body = {id(body.body if isinstance(body, cst.FunctionDef) else body): dag
                            for dag in file.dags for body in dag.bodies}

    def run(self) -> _Layout:
        scope = self.file.scope
        no_bindings: Bindings = {}
        stack: list[tuple[cst.CSTNode, Scope, int, Optional[DagModel], Bindings]] = [
            (stmt, scope.at(i) if isinstance(scope, ModuleScope) else scope, _ONCE, None, no_bindings)
            for i, stmt in reversed(list(enumerate(self.file.module.body)))
        ]
        while stack:
            node, current, where, dag, bindings = stack.pop()
            inner = self.step(node, current, where, dag, bindings)
            if inner is None:
                return _Layout(False, frozenset())
            for child, child_scope, child_where, *passed in reversed(inner):
                stack.append((child, child_scope, child_where, self.dag_of_body.get(id(child), dag),
                              passed[0] if passed else bindings))
        return _Layout(True, frozenset(self.made_once - self.made_otherwise), frozenset(self.helper_callers))

    def step(self, node: cst.CSTNode, scope: Scope, where: int, dag: Optional[DagModel],
             bindings: Bindings) -> Optional[list[tuple]]:
        """The children to walk next, each with where it runs (and, in an unrolled loop, the
        loop's values on that pass); None when the layout is unknown. `dag` is the DAG whose body
        the node is in, if any."""
        runs = where & ~(_IN_TASK_ARGUMENTS | _UNROLLED)
        if id(node) in self.task_nodes:
            made_once = runs == _ONCE and id(node) not in self.made_once  # a second pass makes it again
            (self.made_once if made_once else self.made_otherwise).add(id(node))
            return [(c, scope, where | _IN_TASK_ARGUMENTS) for c in branch_nodes(node)]
        if _sets_dependencies(node) and where & ~_IN_TASK_ARGUMENTS != _ONCE \
                and not (runs & _DEFERRED and self.links_own_tasks(node, scope)):
            return None  # an edge that may be set on some passes only, or never
        if isinstance(node, cst.FunctionDef):
            inner_scope = function_scope(node, scope)
            body_runs = where if id(node) in self.dag_functions else where | _DEFERRED
            if body_runs & _DEFERRED:
                self.deferred_scopes.add(id(inner_scope))
            return [(d.decorator, scope, where) for d in node.decorators] \
                + [(node.params, scope, where), (node.body, inner_scope, body_runs)]
        if isinstance(node, cst.Lambda):
            return [(node.body, scope, where | _DEFERRED)]
        if isinstance(node, cst.Call) and not where & (_DEFERRED | _IN_TASK_ARGUMENTS) \
                and not self.makes_no_task(node, scope):
            if dag is None or not self.is_contained_helper(node, scope, set()):
                return None
            self.helper_callers.add(id(dag))  # its tasks may join this DAG, and no other
        children = branch_nodes(node)
        guarded = where | _GUARDED
        if isinstance(node, cst.If):
            known = value_on_import(node.test, scope)
            if known is None and not runs:
                known = decided_by_pass(node.test, scope, bindings)   # decided by this pass's values
            if known is not None:  # `if __name__ == "__main__":` never runs in the DAG processor
                taken = node.body if known else node.orelse
                return [(taken, scope, where)] if taken is not None else []
            return [(node.test, scope, where)] + [(c, scope, guarded) for c in children if c is not node.test]
        if isinstance(node, cst.For) and not runs:
            passes = loop_passes(node, scope, bindings)
            if passes is not None:
                unrolled = where | _UNROLLED
                return [(node.iter, scope, where)] + [(node.body, scope, unrolled, bound) for bound in passes] \
                    + ([(node.orelse, scope, where)] if node.orelse is not None else [])
        if isinstance(node, (cst.For, cst.While)):
            first = node.iter if isinstance(node, cst.For) else node.test
            return [(first, scope, where)] + [(c, scope, guarded) for c in children if c is not first]
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp, cst.Try, cst.Match,
                             cst.IfExp, cst.BooleanOperation)):
            return [(c, scope, guarded) for c in children]
        return [(c, scope, where) for c in children]

    def is_contained_helper(self, call: cst.Call, scope: Scope, seen: set[int]) -> bool:
        """A call of a plain function of the file (no decorator, no function passed to it) whose
        body only makes tasks the model sees, calls what makes none or other such functions:
        the tasks it makes without `dag=` go to the active DAG, those with `dag=` are tasks of
        that DAG made in a function body (so not made once: that DAG stays unknown)."""
        if not isinstance(call.func, cst.Name) or any(_is_function(arg.value, scope) for arg in call.args):
            return False
        binding = scope.single(call.func.value)
        if not isinstance(binding, FunctionBinding) or binding.node.decorators:
            return False
        function = binding.node
        if id(function) in seen:
            return True  # recursion: this body is being checked already
        seen.add(id(function))
        inner = function_scope(function, scope)
        pending: list[cst.CSTNode] = [function.body]
        while pending:
            node = pending.pop()
            if isinstance(node, cst.Lambda) or id(node) in self.task_nodes:
                continue  # runs later; a task's arguments make no task of the DAG (as in step)
            if isinstance(node, cst.FunctionDef):
                # Its body runs when called: a call of it here is checked as a helper's.
                pending.extend([*(d.decorator for d in node.decorators), node.params])
                continue
            if isinstance(node, cst.Call) and not self.makes_no_task(node, inner) \
                    and not self.is_contained_helper(node, inner, seen):
                return False
            pending.extend(branch_nodes(node))
        return True

    def links_own_tasks(self, node: cst.CSTNode, scope: Scope) -> bool:
        """`submit >> poll` in a function body, each side a name the function binds once to a
        task it makes: an edge between tasks made in a body, which no DAG's known tasks are."""
        if id(scope) not in self.deferred_scopes:
            return False  # a lambda's edge between tasks made once, in the module or an @dag body
        sides: list[cst.CSTNode] = [node]
        while sides:
            side = sides.pop()
            if isinstance(side, cst.BinaryOperation):
                sides.extend((side.left, side.right))
                continue
            if isinstance(side, (cst.List, cst.Tuple)):
                sides.extend(element.value for element in side.elements)
                continue
            if not isinstance(side, cst.Name) or len(scope.bindings.get(side.value, ())) != 1:
                return False
            binding = scope.bindings[side.value][0]
            if not isinstance(binding, ConstantBinding) or id(binding.value) not in self.task_nodes:
                return False
        return isinstance(node, cst.BinaryOperation)

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
