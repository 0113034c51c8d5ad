"""The DAG model's dataclasses: a DAG, a task, the calls made at parse time, an operator's
methods and everything the rules need to know about one file (FileModel). The builder
(dagguard.model.dags.builder) makes them; the rules and the other model packages read them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import libcst as cst

from dagguard.model.basics.arguments import ArgValue, Arguments
from dagguard.model.project.factory_keywords import FactoryCall
from dagguard.model.dags.nesting import Nesting
from dagguard.model.basics.scope import Scope


@dataclass(frozen=True)
class ImportedFunction:
    """A @task function of another project module that a DAG of this file calls."""

    function: cst.FunctionDef
    scope: Scope                     # the scope it is defined in, of its own module


@dataclass(frozen=True)
class TaskModel:
    """One task of a DAG: an operator instantiation or a TaskFlow call site."""

    task_id: Optional[str]           # None when not static
    kind: str                        # "operator" or "taskflow"
    operator: Optional[str]          # qualified class name or TaskFlow decorator
    node: cst.CSTNode                # the operator call, the TaskFlow call site, or (for a
                                     # @task function no DAG of the file calls) its decorator
    args: Arguments
    callable: Optional[cst.FunctionDef]
    callable_scope: Optional[Scope]
    group_id: Optional[str]          # "" outside task groups, None when the prefix is unknown
    scope: Scope                     # where the task is made: its arguments are read there
    # The loops, prefixing task groups and conditions around the call, outermost first, from the
    # start of its DAG's body if it is written there (model/dags/nesting.py).
    nesting: Nesting = ()
    # Are its arguments evaluated when the file is parsed? (Not inside a function's body, unless
    # an @dag function's.) Read for tasks outside any DAG of the file.
    parse_time: bool = True
    # A @task function another project module defines: the task's body is read there, and only
    # by what asks for it (callable stays None, so a rule reading callables sees no other tree).
    imported: Optional[ImportedFunction] = None

    @property
    def label(self) -> str:
        return f"task '{self.task_id}'" if self.task_id else "task"

    @property
    def full_task_id(self) -> Optional[str]:
        """The task id with its task-group prefix, as Airflow stores it."""
        if self.task_id is None or self.group_id is None:
            return None
        return f"{self.group_id}.{self.task_id}" if self.group_id else self.task_id


# The DAG arguments `@asset` and `@asset.multi` take (`_DAGFactory` in Airflow 3.3.2's
# sdk/definitions/asset/decorators.py); Airflow itself passes catchup=False.
ASSET_DAG_ARGUMENTS = frozenset({
    "schedule", "is_paused_upon_creation", "dag_id", "dag_display_name", "description", "params",
    "on_success_callback", "on_failure_callback", "access_control", "owner_links", "tags",
})

# What else each decorator takes: the asset's own fields, or @asset.multi's outlets. Any other
# keyword raises TypeError when the file loads.
ASSET_DECORATOR_ARGUMENTS = {
    "@asset": ASSET_DAG_ARGUMENTS | {"name", "uri", "group", "extra", "watchers"},
    "@asset.multi": ASSET_DAG_ARGUMENTS | {"outlets"},
}


@dataclass
class DagModel:
    """One DAG definition: `DAG(...)` (context manager or assigned) or an `@dag` function."""

    dag_id: Optional[str]
    kind: str                        # "context", "call" or "decorator"
    call: Optional[cst.Call]         # the DAG(...) / @dag(...) call; None for a bare @dag
    report_node: cst.CSTNode         # where DAG-level findings point
    function: Optional[cst.FunctionDef]
    args: Arguments
    default_args: Arguments
    scope: Scope
    tasks: list[TaskModel] = field(default_factory=list)
    # Code written inside the DAG: the bodies of its `with` blocks, its @dag function.
    bodies: list[cst.CSTNode] = field(default_factory=list)
    # The loops and conditions around the DAG's creation: a loop there makes a new DAG each pass.
    nesting: Nesting = ()
    factory: Optional[str] = None    # the factory or wrapper whose call made it, qualified
    factory_call: Optional[FactoryCall] = field(default=None, repr=False, compare=False)
    # "@asset" or "@asset.multi" for the one-task DAG such a decorated function is, and the
    # arguments written on the decorator (`args` has Airflow's catchup=False in place of any).
    asset_decorator: Optional[str] = None
    asset_arguments: Optional[Arguments] = None

    def accepts(self, name: str) -> bool:
        """Can the DAG's author set the DAG argument `name`? @asset takes only some of them."""
        return self.asset_decorator is None or name in ASSET_DAG_ARGUMENTS

    def keyword_for(self, name: str) -> Optional[str]:
        """The keyword a fix adds to the DAG's call to set `name`: `name` on DAG() and @dag; on
        a factory's call, the keyword it passes on as `name`, or None when none surely does."""
        if not self.accepts(name):
            return None
        if self.factory is None:
            return name
        return self.factory_call.keyword_for(name, self.args) if self.factory_call is not None else None

    @property
    def found_by(self) -> str:
        """How the DAG was found: `DAG()`, `@dag` or the factory's qualified name."""
        if self.factory is not None:
            return self.factory
        if self.asset_decorator is not None:
            return self.asset_decorator
        return "@dag" if self.kind == "decorator" else "DAG()"

    def effective(self, name: str) -> Optional[ArgValue]:
        """A DAG argument, falling back to default_args as Airflow does for dates."""
        return self.args.get(name) or self.default_args.get(name)

    def surely_lacks(self, name: str, *, or_default_args: bool = False) -> bool:
        """True only when `name` is certainly not set (on the DAG, and in default_args if asked)."""
        if not self.args.surely_missing(name):
            return False
        return not or_default_args or self.default_args.surely_missing(name)

    @property
    def label(self) -> str:
        name = f"DAG '{self.dag_id}'" if self.dag_id else "DAG"
        return f"{name} (made by {self.factory})" if self.factory else name


@dataclass(frozen=True)
class ParseTimeCall:
    """A call that runs whenever the scheduler parses the file."""

    node: cst.Call
    scope: Scope


@dataclass(frozen=True)
class OperatorMethod:
    """A method Airflow calls with the run's context on an operator class of this file:
    `execute(self, context)`, `pre_execute`/`post_execute`, a sensor's `poke`, a branch
    operator's `choose_branch`, a deferred operator's `execute_complete`."""

    class_name: str
    function: cst.FunctionDef
    scope: Scope                     # the function's own scope


@dataclass
class FileModel:
    """Everything the rules need to know about one file."""

    module: cst.Module
    scope: Scope
    dags: list[DagModel]
    parse_time_calls: list[ParseTimeCall]
    # Tasks that no DAG of this file takes: Airflow operators made outside any DAG, and @task
    # functions that no DAG of the file calls (their call may be in another module).
    loose_tasks: list[TaskModel] = field(default_factory=list)
    operator_methods: list[OperatorMethod] = field(default_factory=list)
    # Derived facts that several rules need (dagguard.model.tasks.task_io), filled on first use.
    analyses: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # Other files its facts were read from (.sql templates): a cached result of this file is
    # stale when one of them changes.
    read_files: set[Path] = field(default_factory=set, repr=False, compare=False)

    def every_task(self) -> list[TaskModel]:
        """The tasks of every DAG, then the loose ones. A @task function a DAG calls twice is
        two tasks sharing one decorator: rules reporting its arguments report them once."""
        return [task for dag in self.dags for task in dag.tasks] + self.loose_tasks
