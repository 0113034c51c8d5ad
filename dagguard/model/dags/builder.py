"""The DAG model of one file, built in a single pass over its libcst tree.

The walk is a hand-written, iterative traversal that reads node fields directly: libcst's
visitor machinery rebuilds every node it visits and costs as much as the parse itself.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from dagguard.model.basics import airflow_names as names
from dagguard.model.basics.arguments import ArgValue, Arguments, call_arguments, dict_arguments
from dagguard.model.dags.dag_attributes import apply_attribute_assignments
from dagguard.model.project.factories import Resolver
from dagguard.model.project.factory_keywords import FactoryCall
from dagguard.model.project.project import ModuleLink
from dagguard.model.basics.import_guards import value_on_import
from dagguard.model.dags.operator_classes import operator_class_of
from dagguard.model.dags.nesting import Condition, Nesting, PrefixingGroup
from dagguard.model.basics.scope import ClassBinding, FunctionBinding, Scope, function_scope, module_scope
from dagguard.model.basics.tree import branch_nodes, child_nodes
from dagguard.model.basics.values import Evaluator, decorator_target, is_task_decorator


from dagguard.model.dags.models import (DagModel, FileModel, ImportedFunction, OperatorMethod,
                                          ParseTimeCall, TaskModel)


@dataclass(frozen=True)
class _Ctx:
    scope: Scope
    dag: Optional[DagModel]
    group: Optional[str]             # task-group prefix: "" none, None unknown
    parse_time: bool                 # does this code run when the file is parsed?
    nesting: Nesting = ()            # loops, groups and conditions entered since the DAG's body began
    in_task_arguments: bool = False  # inside the arguments of a call that made a task


_TASKFLOW_CHAIN = frozenset({"override", "partial"})
_EXPANDERS = frozenset({"expand", "expand_kwargs"})
# `dag.task` is `functools.partial(task, dag=dag)` (airflow/sdk/definitions/dag.py).
DAG_TASK_DECORATOR = "airflow.sdk.task"


@dataclass(frozen=True)
class _TaskflowFunction:
    """How a function became a TaskFlow task: `@task...`, or `@dag.task` bound to `dag`."""

    decorator: cst.Decorator
    operator: Optional[str]
    dag: Optional[DagModel] = None
    function: Optional[cst.FunctionDef] = None
    scope: Optional[Scope] = None    # where the function is defined: its decorator is read there
    parse_time: bool = True
    # Defined in another project module, which checks its body as that module's own task.
    imported: bool = False


class _Builder:
    """Collects DAGs, tasks and parse-time calls in one iterative walk."""

    def __init__(self, module: cst.Module, resolver: Optional[Resolver] = None) -> None:
        self.module = module
        self.resolver = resolver or Resolver(None, None)
        self.scope = module_scope(module)
        if self.resolver.index is not None:
            self.scope.project = ModuleLink(self.resolver.index, self.resolver.path)
        self.dags: list[DagModel] = []
        self.parse_time_calls: list[ParseTimeCall] = []
        self.dag_vars: dict[tuple[int, str], DagModel] = {}
        self.dag_functions: dict[int, DagModel] = {}  # an @dag function, by id: calling it makes that DAG
        self.asset_functions: dict[int, DagModel] = {}  # an @asset function, by id: the DAG it is
        self.claimed_calls: set[int] = set()
        self.factory_returns: set[int] = set()   # calls a function returns: not DAGs of this file
        self.taskflow: dict[int, _TaskflowFunction] = {}
        self.has_dag_bound_tasks = False   # a `@dag.task` task may be called outside its DAG's body
        self.attached_functions: set[int] = set()  # @task functions some DAG of the file calls
        self.loose_operators: list[TaskModel] = []
        self.operator_classes: set[str] = set()     # same-file classes deriving from an operator
        self.operator_methods: list[OperatorMethod] = []

    def build(self) -> FileModel:
        stack: list[tuple[cst.CSTNode, _Ctx]] = [
            (stmt, _Ctx(scope=self.scope.at(index), dag=None, group="", parse_time=True))
            for index, stmt in reversed(list(enumerate(self.module.body)))
        ]
        push, pop, handlers = stack.append, stack.pop, _HANDLERS
        while stack:
            node, ctx = pop()
            handler = handlers.get(type(node))
            if handler is not None:
                stack.extend(reversed(handler(self, node, ctx)))
            else:
                for child in reversed(branch_nodes(node)):
                    push((child, ctx))
        apply_attribute_assignments(self.module, self.scope, self.dags)   # `dag.catchup = False`
        return FileModel(self.module, self.scope, self.dags, self.parse_time_calls,
                         self.loose_operators + self.loose_taskflow_functions(), self.operator_methods)

    def loose_taskflow_functions(self) -> list[TaskModel]:
        """A TaskModel for each @task function no DAG of the file calls, made at its decorator."""
        found: list[TaskModel] = []
        for key, taskflow in self.taskflow.items():
            if key in self.attached_functions or taskflow.function is None or taskflow.scope is None \
                    or taskflow.imported:
                continue
            expr = taskflow.decorator.decorator
            evaluator = Evaluator(taskflow.scope)
            args = call_arguments(expr, evaluator) if isinstance(expr, cst.Call) else Arguments()
            task_id_arg = args.get("task_id")
            task_id = taskflow.function.name.value if task_id_arg is None else (
                task_id_arg.value if isinstance(task_id_arg.value, str) else None)
            found.append(TaskModel(
                task_id=task_id, kind="taskflow", operator=taskflow.operator, node=taskflow.decorator, args=args,
                callable=taskflow.function, callable_scope=function_scope(taskflow.function, taskflow.scope),
                group_id=None, scope=taskflow.scope, parse_time=taskflow.parse_time,
            ))
        return found

    # --- DAGs ------------------------------------------------------------------------------

    def is_dag_call(self, node: cst.BaseExpression, scope: Scope) -> bool:
        return isinstance(node, cst.Call) and scope.resolves_to(node.func, names.DAG_CLASSES)

    def new_dag_from_call(self, call: cst.Call, kind: str, ctx: _Ctx) -> DagModel:
        evaluator = Evaluator(ctx.scope, fstrings=True)
        args = call_arguments(call, evaluator, positional=("dag_id",))
        dag = self._make_dag(args, evaluator, kind, call, call, None, ctx)
        self.claimed_calls.add(id(call))
        return dag

    def dag_from_factory(self, call: cst.BaseExpression, ctx: _Ctx) -> Optional[DagModel]:
        """The DAG a call to a factory or wrapper class makes: `create_dag(...)`, `TtdDag(...)`."""
        if type(call) is not cst.Call or id(call) in self.claimed_calls or id(call) in self.factory_returns:
            return None
        made = self.resolver.dag_from_call(call, ctx.scope)  # type: ignore[arg-type]
        if made is None:
            return None
        self.claimed_calls.add(id(call))
        dag = self._make_dag(made.args, Evaluator(ctx.scope), "factory", call, call, None, ctx,  # type: ignore[arg-type]
                             default_args=made.default_args, factory=made.factory)
        dag.factory_call = FactoryCall(self.resolver, call, ctx.scope, made.factory)  # type: ignore[arg-type]
        return dag

    def _make_dag(self, args: Arguments, evaluator: Evaluator, kind: str, call: Optional[cst.Call],
                  report_node: cst.CSTNode, function: Optional[cst.FunctionDef], ctx: _Ctx,
                  default_id: Optional[str] = None, default_args: Optional[Arguments] = None,
                  factory: Optional[str] = None) -> DagModel:
        dag_id_arg = args.get("dag_id")
        if dag_id_arg is not None:
            dag_id = dag_id_arg.value if isinstance(dag_id_arg.value, str) else None
        else:
            dag_id = default_id
        dag = DagModel(
            dag_id=dag_id, kind=kind, call=call, report_node=report_node, function=function,
            args=args, scope=ctx.scope, factory=factory, nesting=ctx.nesting,
            default_args=default_args if default_args is not None
            else dict_arguments(args.get("default_args"), evaluator),
        )
        self.dags.append(dag)
        if function is not None and kind == "decorator":
            self.dag_functions[id(function)] = dag
        return dag

    def dag_from_function_call(self, expr: cst.BaseExpression, scope: Scope) -> Optional[DagModel]:
        """The DAG an `@dag` function's call returns: `d = nightly()`."""
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            binding = scope.single(expr.func.value)
            if isinstance(binding, FunctionBinding):
                return self.dag_functions.get(id(binding.node))
        return None

    # DAG variables are keyed by the scope that binds them; the walk's source order makes a
    # later binding replace an earlier one.
    def bind_dag_var(self, target: cst.BaseExpression, dag: DagModel, scope: Scope) -> None:
        if isinstance(target, cst.Name):
            self.dag_vars[(id(scope.whole), target.value)] = dag

    def dag_for_name(self, expr: cst.BaseExpression, scope: Optional[Scope]) -> Optional[DagModel]:
        if not isinstance(expr, cst.Name):
            return None
        while scope is not None:
            dag = self.dag_vars.get((id(scope.whole), expr.value))
            if dag is not None:
                return dag
            if expr.value in scope.bindings:
                return None
            scope = scope.parent
        return None

    # --- tasks -----------------------------------------------------------------------------

    def operator_task(self, call: cst.Call, ctx: _Ctx) -> Optional[TaskModel]:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _TASKFLOW_CHAIN:
            func = func.value  # Operator.partial(...), or a TaskFlow function's .override(...)
        qual = ctx.scope.qualname(func)
        if qual is None or not names.is_airflow_operator(qual):
            # An unknown callee with `task_id=` is taken for a custom operator, except where
            # it cannot be one: a spec built in another task's arguments, or an Airflow hook.
            has_task_id = any(a.keyword is not None and a.keyword.value == "task_id" for a in call.args)
            if not has_task_id or ctx.in_task_arguments or (qual is not None and names.is_airflow_non_operator(qual)) \
                    or self.taskflow_function(func, ctx.scope) is not None:
                return None
        evaluator = Evaluator(ctx.scope)
        args = call_arguments(call, evaluator)
        task_id_arg = args.get("task_id")
        task_id = task_id_arg.value if task_id_arg and isinstance(task_id_arg.value, str) else None
        python_callable, callable_scope, imported = None, None, None
        target = args.get("python_callable")
        if target is not None:
            python_callable, callable_scope = self.local_function(target.node, ctx.scope)
            found = self.project_function(target.node, ctx.scope) if python_callable is None else None
            imported = None if found is None else ImportedFunction(*found)
        return TaskModel(task_id=task_id, kind="operator", operator=qual, node=call, args=args,
                         callable=python_callable, callable_scope=callable_scope, group_id=ctx.group,
                         scope=ctx.scope, nesting=ctx.nesting, imported=imported)

    def is_operator_call(self, call: cst.Call, scope: Scope) -> bool:
        """`SomeOperator(...)` or `SomeOperator.partial(...)`, of a class Airflow ships, of a
        class of this file deriving from one, or (given a task_id) of any operator class
        (model/dags/operator_classes.py: the project's, another package's `...Operator`)."""
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "partial":  # type: ignore[attr-defined]
            func = func.value  # type: ignore[attr-defined]
        if type(func) is cst.Name and func.value in self.operator_classes:  # type: ignore[attr-defined]
            return type(scope.single(func.value)) is ClassBinding  # type: ignore[attr-defined]
        qual = scope.qualname(func)
        if qual is not None and names.is_airflow_operator(qual):
            return True
        return any(a.keyword is not None and a.keyword.value == "task_id" for a in call.args) \
            and operator_class_of(func, scope) is not None

    def local_function(self, expr: cst.BaseExpression, scope: Scope) -> tuple[Optional[cst.FunctionDef], Optional[Scope]]:
        if isinstance(expr, cst.Name):
            binding = scope.single(expr.value)
            if isinstance(binding, FunctionBinding):
                return binding.node, function_scope(binding.node, scope)
        return None, None

    def project_function(self, expr: cst.BaseExpression, scope: Scope) -> Optional[tuple[cst.FunctionDef, Scope]]:
        """The project module's function `expr` names through an import (`from lib.tasks import
        export` then `export`, or `tasks.export`), and its module's scope; None without a project
        index. A PythonOperator's imported `python_callable` is read there only where a rule asks,
        as an imported @task function's body is."""
        if self.resolver.index is None:
            return None
        if isinstance(expr, cst.Name):
            return scope.function(expr.value)
        if isinstance(expr, cst.Attribute):
            qual, link = scope.qualname(expr), scope.project_link()
            return link.function(qual) if qual is not None and link is not None else None
        return None

    def taskflow_function(self, expr: cst.BaseExpression, scope: Scope) -> Optional[cst.FunctionDef]:
        if isinstance(expr, cst.Name):
            binding = scope.single(expr.value)
            if isinstance(binding, FunctionBinding) and id(binding.node) in self.taskflow:
                return binding.node
            if binding is not None and not isinstance(binding, FunctionBinding):
                return self.imported_taskflow_function(expr, scope)
        elif isinstance(expr, cst.Attribute):
            return self.imported_taskflow_function(expr, scope)
        return None

    def imported_taskflow_function(self, expr: cst.Name | cst.Attribute, scope: Scope) -> Optional[cst.FunctionDef]:
        """A @task function of a project module that `expr` names through an import: calling it
        in a DAG's body makes a task of that DAG (`from lib.tasks import get_ids` then
        `get_ids()`, or `tasks.get_ids()`)."""
        found = self.project_function(expr, scope)
        if found is None:
            return None
        function, defined_in = found
        if id(function) in self.taskflow:
            return function
        for decorator in function.decorators:
            target = decorator_target(decorator)
            if is_task_decorator(target, defined_in):
                self.register_taskflow(function, _TaskflowFunction(
                    decorator, defined_in.qualname(target), function=function, scope=defined_in, imported=True))
                return function
        return None

    def register_taskflow(self, function: cst.FunctionDef, taskflow: _TaskflowFunction) -> None:
        self.taskflow[id(function)] = taskflow
        self.has_dag_bound_tasks = self.has_dag_bound_tasks or taskflow.dag is not None
        if isinstance(taskflow.decorator.decorator, cst.Call):
            # `@task(task_id="x")` names a TaskFlow task: its call is not an operator's.
            self.claimed_calls.add(id(taskflow.decorator.decorator))

    def taskflow_task(self, call: cst.Call, ctx: _Ctx) -> Optional[TaskModel]:
        """A call that instantiates a @task function: f(), f.override(..)(), f.partial(..).expand(..)."""
        func = call.func
        override: Optional[cst.Call] = None
        if isinstance(func, cst.Attribute) and func.attr.value in _EXPANDERS:
            func = func.value
            if isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute) \
                    and func.func.attr.value in _TASKFLOW_CHAIN:
                override = func if func.func.attr.value == "override" else None
                func = func.func.value
        elif isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute) \
                and func.func.attr.value == "override":
            override = func
            func = func.func.value
        function = self.taskflow_function(func, ctx.scope)
        if function is None:
            return None
        evaluator = Evaluator(ctx.scope)
        taskflow = self.taskflow[id(function)]
        decorator = taskflow.decorator
        if taskflow.imported:
            args = _imported_decorator_arguments(decorator, taskflow.scope)
        else:
            args = call_arguments(decorator.decorator, evaluator) if isinstance(decorator.decorator, cst.Call) \
                else Arguments()
        if override is not None:
            overrides = call_arguments(override, evaluator)
            args = Arguments({**args.values, **overrides.values}, args.complete and overrides.complete)
        task_id_arg = args.get("task_id")
        if task_id_arg is None:
            task_id: Optional[str] = function.name.value
        else:
            task_id = task_id_arg.value if isinstance(task_id_arg.value, str) else None
        if taskflow.imported:
            # Its decorator belongs to its own module, which reports it there; its body is read
            # for the DAG calling it only where a rule asks (DG202's clock reads).
            return TaskModel(task_id=task_id, kind="taskflow", operator=taskflow.operator, node=call, args=args,
                             callable=None, callable_scope=None, group_id=ctx.group, scope=ctx.scope,
                             nesting=ctx.nesting, imported=None if taskflow.scope is None
                             else ImportedFunction(function, taskflow.scope))
        return TaskModel(task_id=task_id, kind="taskflow", operator=taskflow.operator,
                         node=call, args=args, callable=function,
                         callable_scope=function_scope(function, ctx.scope), group_id=ctx.group,
                         scope=ctx.scope, nesting=ctx.nesting)


# What a DAG file needs of an imported @task function's decorator: its task id, and the trigger
# rule that orders it (model/dags/serial_tasks.py). The rest is checked in the function's own module.
_IMPORTED_DECORATOR_ARGUMENTS = ("task_id", "trigger_rule")


def _imported_decorator_arguments(decorator: cst.Decorator, defined_in: Optional[Scope]) -> Arguments:
    if not isinstance(decorator.decorator, cst.Call) or defined_in is None:
        return Arguments()
    every = call_arguments(decorator.decorator, Evaluator(defined_in))
    kept = {name: dataclasses.replace(every.values[name], scope=defined_in)
            for name in _IMPORTED_DECORATOR_ARGUMENTS if name in every.values}
    return Arguments(kept, every.complete)


def _handle_function(b: _Builder, node: cst.FunctionDef, ctx: _Ctx) -> list[tuple[cst.CSTNode, _Ctx]]:
    inner_scope = function_scope(node, ctx.scope)
    body_ctx = _Ctx(scope=inner_scope, dag=None, group="", parse_time=False)
    for decorator in node.decorators:
        target = decorator_target(decorator)
        if ctx.scope.resolves_to(target, names.ANY_ASSET_DECORATORS):
            _asset_dag(b, node, decorator, ctx)
        elif ctx.scope.resolves_to(target, names.DAG_DECORATORS):
            evaluator = Evaluator(ctx.scope, fstrings=True)
            if isinstance(decorator.decorator, cst.Call):
                args = call_arguments(decorator.decorator, evaluator, positional=("dag_id",))
                call: Optional[cst.Call] = decorator.decorator
                b.claimed_calls.add(id(call))
            else:
                args, call = Arguments(), None
            dag = b._make_dag(args, evaluator, "decorator", call, decorator.decorator, node, ctx,
                              default_id=node.name.value)
            dag.bodies.append(node)
            # The @dag function body runs when the file is parsed, like module-level code.
            body_ctx = _Ctx(scope=inner_scope, dag=dag, group="", parse_time=ctx.parse_time)
        elif is_task_decorator(target, ctx.scope):
            b.register_taskflow(node, _TaskflowFunction(decorator, ctx.scope.qualname(target), function=node,
                                                        scope=ctx.scope, parse_time=ctx.parse_time))
        elif type(target) is cst.Attribute and target.attr.value == "task":  # type: ignore[attr-defined]
            owner = b.dag_for_name(target.value, ctx.scope)  # type: ignore[attr-defined]
            if owner is not None:
                b.register_taskflow(node, _TaskflowFunction(decorator, DAG_TASK_DECORATOR, owner, function=node,
                                                            scope=ctx.scope, parse_time=ctx.parse_time))
        elif ctx.scope.resolves_to(target, names.TASK_GROUP_DECORATORS):
            group_id = node.name.value
            if isinstance(decorator.decorator, cst.Call):
                args = call_arguments(decorator.decorator, Evaluator(ctx.scope), positional=("group_id",))
                given = args.get("group_id")
                group_id = given.value if given and isinstance(given.value, str) else (None if given else group_id)
            prefix = _join_group(ctx.group, group_id)
            body_ctx = _Ctx(scope=inner_scope, dag=ctx.dag, group=prefix, parse_time=ctx.parse_time)
    if id(node) in b.asset_functions:
        _asset_task(b, node, ctx)
    pushed: list[tuple[cst.CSTNode, _Ctx]] = [(d.decorator, ctx) for d in node.decorators]
    pushed.append((node.params, ctx))
    pushed.append((node.body, body_ctx))
    return pushed


def _asset_dag(b: _Builder, node: cst.FunctionDef, decorator: cst.Decorator, ctx: _Ctx) -> None:
    """The DAG `@asset(...)` / `@asset.multi(...)` makes of a function: its dag_id is `dag_id=`,
    else the asset's `name=` (for @asset), else the function's name; Airflow adds catchup=False."""
    multi = ctx.scope.resolves_to(decorator_target(decorator), names.MULTI_ASSET_DECORATORS)
    evaluator = Evaluator(ctx.scope, fstrings=True)
    call = decorator.decorator if isinstance(decorator.decorator, cst.Call) else None
    args = call_arguments(call, evaluator) if call is not None else Arguments()
    name = args.get("name") if not multi else None
    default_id = node.name.value if name is None else (name.value if isinstance(name.value, str) else None)
    fixed = ArgValue("catchup", cst.Name("False"), False, "asset", decorator)
    written = args
    args = Arguments({**args.values, "catchup": fixed}, args.complete)
    if call is not None:
        b.claimed_calls.add(id(call))
    dag = b._make_dag(args, evaluator, "asset", call, decorator.decorator, node, ctx, default_id=default_id)
    dag.asset_decorator = "@asset.multi" if multi else "@asset"
    dag.asset_arguments = written
    b.asset_functions[id(node)] = dag


def _asset_task(b: _Builder, node: cst.FunctionDef, ctx: _Ctx) -> None:
    """The one task of an @asset DAG: the function run by Airflow's _AssetMainOperator (task_id
    the function's name), or the @task the function also is."""
    dag = b.asset_functions[id(node)]
    taskflow = b.taskflow.get(id(node))
    if taskflow is not None:
        b.attached_functions.add(id(node))
        evaluator = Evaluator(ctx.scope)
        expr = taskflow.decorator.decorator
        args = call_arguments(expr, evaluator) if isinstance(expr, cst.Call) else Arguments()
        given = args.get("task_id")
        task_id = node.name.value if given is None else (given.value if isinstance(given.value, str) else None)
        operator, report = taskflow.operator, taskflow.decorator
    else:
        args, task_id = Arguments(), node.name.value
        operator = "airflow.sdk.asset.multi" if dag.asset_decorator == "@asset.multi" else "airflow.sdk.asset"
        report = next(d for d in node.decorators if id(d.decorator) == id(dag.report_node))
    dag.tasks.append(TaskModel(
        task_id=task_id, kind="taskflow", operator=operator, node=report, args=args, callable=node,
        callable_scope=function_scope(node, ctx.scope), group_id="", scope=ctx.scope,
    ))


# The methods Airflow 3.3 calls with the run's context (sdk/execution_time/task_runner.py,
# sdk/bases/sensor.py, sdk/bases/branch.py); `on_kill(self)` gets none.
OPERATOR_METHODS = frozenset({"execute", "pre_execute", "post_execute", "poke", "choose_branch",
                              "execute_complete"})


def _handle_class(b: _Builder, node: cst.ClassDef, ctx: _Ctx) -> list[tuple[cst.CSTNode, _Ctx]]:
    # A class deriving from an Airflow operator (or from such a class of this file): Airflow calls
    # its execute() with the context, whichever DAG uses it.
    if any(_is_operator_base(base.value, ctx.scope, b.operator_classes) for base in node.bases):
        b.operator_classes.add(node.name.value)
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        for stmt in body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value in OPERATOR_METHODS:
                b.operator_methods.append(OperatorMethod(node.name.value, stmt, function_scope(stmt, ctx.scope)))
    return [(child, ctx) for child in branch_nodes(node)]


def _is_operator_base(base: cst.BaseExpression, scope: Scope, local_operators: set[str]) -> bool:
    if isinstance(base, cst.Name) and base.value in local_operators:
        return True
    # Airflow's operators, the project's operator classes, other packages' `...Operator`s.
    return operator_class_of(base, scope) is not None


def _join_group(prefix: Optional[str], group_id: Optional[str]) -> Optional[str]:
    if prefix is None or group_id is None:
        return None
    return f"{prefix}.{group_id}" if prefix else group_id


def _handle_with(b: _Builder, node: cst.With, ctx: _Ctx) -> list[tuple[cst.CSTNode, _Ctx]]:
    body_ctx = ctx
    for item in node.items:
        expr = item.item
        if b.is_dag_call(expr, ctx.scope):
            dag = b.new_dag_from_call(expr, "context", ctx)  # type: ignore[arg-type]
            if item.asname is not None:
                b.bind_dag_var(item.asname.name, dag, ctx.scope)
            dag.bodies.append(node.body)
            body_ctx = dataclasses.replace(body_ctx, dag=dag, group="", nesting=())
        elif isinstance(expr, cst.Call) and ctx.scope.resolves_to(expr.func, names.TASK_GROUP_CLASSES):
            args = call_arguments(expr, Evaluator(ctx.scope), positional=("group_id",))
            given = args.get("group_id")
            group_id = given.value if given and isinstance(given.value, str) else None
            prefix_arg = args.get("prefix_group_id")
            if prefix_arg is not None and prefix_arg.value is False:
                group = body_ctx.group  # children keep their plain task ids
                nesting = body_ctx.nesting
            else:
                group = _join_group(body_ctx.group, group_id)
                nesting = body_ctx.nesting
                if nesting and given is not None:  # inside a loop, a group named per pass keeps ids apart
                    nesting += (PrefixingGroup(given.node),)
            body_ctx = dataclasses.replace(body_ctx, group=group, nesting=nesting)
        elif (made := b.dag_from_factory(expr, ctx)) is not None:
            if item.asname is not None:
                b.bind_dag_var(item.asname.name, made, ctx.scope)
            made.bodies.append(node.body)
            body_ctx = dataclasses.replace(body_ctx, dag=made, group="", nesting=())
        else:
            dag = b.dag_for_name(expr, ctx.scope)
            if dag is not None:
                dag.bodies.append(node.body)
                # The DAG may be made anew on each pass of an enclosing loop: start afresh.
                body_ctx = dataclasses.replace(body_ctx, dag=dag, group="", nesting=())
    pushed: list[tuple[cst.CSTNode, _Ctx]] = [(item.item, ctx) for item in node.items]
    pushed.append((node.body, body_ctx))
    return pushed


def _handle_assign(b: _Builder, node: cst.Assign, ctx: _Ctx) -> list[tuple[cst.CSTNode, _Ctx]]:
    if b.is_dag_call(node.value, ctx.scope):
        dag = b.new_dag_from_call(node.value, "call", ctx)  # type: ignore[arg-type]
        for target in node.targets:
            b.bind_dag_var(target.target, dag, ctx.scope)
    elif (returned := b.dag_from_function_call(node.value, ctx.scope)) is not None \
            or (ctx.dag is None and (returned := b.dag_from_factory(node.value, ctx)) is not None):
        for target in node.targets:
            b.bind_dag_var(target.target, returned, ctx.scope)
    return [(child, ctx) for child in child_nodes(node)]


def _handle_ann_assign(b: _Builder, node: cst.AnnAssign, ctx: _Ctx) -> list[tuple[cst.CSTNode, _Ctx]]:
    # `dag: DAG = DAG(...)` / `dag: DAG = create_dag(...)` bind the DAG as a plain assignment does.
    if node.value is not None:
        if b.is_dag_call(node.value, ctx.scope):
            b.bind_dag_var(node.target, b.new_dag_from_call(node.value, "call", ctx), ctx.scope)  # type: ignore[arg-type]
        elif ctx.dag is None and (made := b.dag_from_factory(node.value, ctx)) is not None:
            b.bind_dag_var(node.target, made, ctx.scope)
    return [(child, ctx) for child in child_nodes(node)]


def _handle_call(b: _Builder, node: cst.Call, ctx: _Ctx) -> list[tuple[cst.CSTNode, _Ctx]]:
    made_task = False
    if id(node) not in b.claimed_calls:
        if b.is_dag_call(node, ctx.scope):
            b.new_dag_from_call(node, "call", ctx)
        elif ctx.dag is None and b.dag_from_factory(node, ctx) is not None:
            pass
        elif ctx.dag is not None or b.has_dag_bound_tasks \
                or any(a.keyword is not None and a.keyword.value == "dag" for a in node.args):
            # Outside a DAG's body only `dag=` or `@dag.task` can attach a task: skip the
            # lookups otherwise.
            task = b.taskflow_task(node, ctx) or b.operator_task(node, ctx)
            made_task = task is not None
            if task is not None:
                dag = ctx.dag
                if task.kind == "operator":
                    dag_arg = task.args.get("dag")
                    if dag_arg is not None:
                        dag = b.dag_for_name(dag_arg.node, ctx.scope)
                elif task.callable is not None:
                    dag = b.taskflow[id(task.callable)].dag or dag
                if dag is not None:
                    dag.tasks.append(task)
                    if task.kind == "taskflow" and task.callable is not None:
                        b.attached_functions.add(id(task.callable))
                elif task.kind == "operator" and b.is_operator_call(node, ctx.scope):
                    b.loose_operators.append(dataclasses.replace(task, group_id=None, parse_time=ctx.parse_time))
        elif b.is_operator_call(node, ctx.scope):
            task = b.operator_task(node, ctx)
            made_task = task is not None
            if task is not None:
                b.loose_operators.append(dataclasses.replace(task, group_id=None, parse_time=ctx.parse_time))
    if ctx.parse_time:
        b.parse_time_calls.append(ParseTimeCall(node, ctx.scope))
    args_ctx = dataclasses.replace(ctx, in_task_arguments=True) if made_task else ctx
    pushed: list[tuple[cst.CSTNode, _Ctx]] = [(node.func, ctx)]
    pushed.extend((arg.value, args_ctx) for arg in node.args)
    return pushed


def _handle_loop(b: _Builder, node: cst.CSTNode, ctx: _Ctx) -> list[tuple[cst.CSTNode, _Ctx]]:
    # A loop around the DAG's creation makes new DAGs (DagModel.nesting); only the others
    # repeat its tasks.
    inner = dataclasses.replace(ctx, nesting=ctx.nesting + (node,))
    if isinstance(node, cst.For):
        pushed = [(node.target, ctx), (node.iter, ctx), (node.body, inner)]
        return pushed + ([(node.orelse, ctx)] if node.orelse is not None else [])
    return [(child, inner) for child in branch_nodes(node)]


def _handle_if(b: _Builder, node: cst.If, ctx: _Ctx) -> list[tuple[cst.CSTNode, _Ctx]]:
    # The DAG processor never runs the body of `if __name__ == "__main__":` or `if TYPE_CHECKING:`
    # (nor the `else` of their negations): what is there is no DAG, task or parse-time call.
    runs = value_on_import(node.test, ctx.scope)
    if runs is None:
        # Inside a loop, a task under an `if` may be made on some passes only.
        inner = dataclasses.replace(ctx, nesting=ctx.nesting + (Condition(node.test),)) if ctx.nesting else ctx
        pushed = [(node.test, ctx), (node.body, inner)]
        return pushed + ([(node.orelse, inner)] if node.orelse is not None else [])
    taken = node.body if runs else node.orelse
    return [(node.test, ctx)] + ([(taken, ctx)] if taken is not None else [])


def _handle_lambda(b: _Builder, node: cst.Lambda, ctx: _Ctx) -> list[tuple[cst.CSTNode, _Ctx]]:
    # Its body runs when called, later: it sees every binding of the module.
    return [(node.body, dataclasses.replace(ctx, parse_time=False, dag=None, scope=ctx.scope.whole,
                                            in_task_arguments=False))]


def _handle_return(b: _Builder, node: cst.Return, ctx: _Ctx) -> list[tuple[cst.CSTNode, _Ctx]]:
    # `return create_dag(...)` in a function makes that function a factory: its callers are
    # the DAGs, and no task can attach to the returned call here.
    if type(node.value) is cst.Call and not ctx.parse_time:
        b.factory_returns.add(id(node.value))
    return [(node.value, ctx)] if node.value is not None else []


def _handle_name(b: _Builder, node: cst.CSTNode, ctx: _Ctx) -> list[tuple[cst.CSTNode, _Ctx]]:
    return []


_HANDLERS = {
    cst.FunctionDef: _handle_function,
    cst.ClassDef: _handle_class,
    cst.With: _handle_with,
    cst.Assign: _handle_assign,
    cst.AnnAssign: _handle_ann_assign,
    cst.Call: _handle_call,
    cst.Lambda: _handle_lambda,
    cst.Return: _handle_return,
    cst.If: _handle_if,
    cst.For: _handle_loop,
    cst.ListComp: _handle_loop,
    cst.SetComp: _handle_loop,
    cst.GeneratorExp: _handle_loop,
    cst.DictComp: _handle_loop,
    # Leaves and subtrees that can hold nothing the model needs.
    cst.Name: _handle_name,
    cst.SimpleString: _handle_name,
    cst.Integer: _handle_name,
    cst.Float: _handle_name,
    cst.Import: _handle_name,
    cst.ImportFrom: _handle_name,
    cst.Pass: _handle_name,
}


def build_file_model(module: cst.Module, resolver: Optional[Resolver] = None) -> FileModel:
    """Build the DAG model of a parsed file; `resolver` finds the DAG factories it calls."""
    return _Builder(module, resolver).build()
