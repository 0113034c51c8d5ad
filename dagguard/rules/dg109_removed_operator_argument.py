"""DG109: task arguments Airflow 3 rejects, so the DAG file fails to import."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from dagguard.model.basics.arguments import ArgValue
from dagguard.model.dags.models import FileModel, TaskModel
from dagguard.model.dags.operator_classes import OperatorClass, task_operator_class
from dagguard.model.basics.scope import Scope
from dagguard.rules.base import SAFE, Fix, Report, Rule, RuleContext
from dagguard.rules.edits import remove_argument, rename_fix, written_keyword

# Checked against Airflow 3.3.2 with its standard provider: each raises TypeError ("Invalid
# arguments were passed") when the operator is made, inside a DAG or not.
_PYTHON_OPERATORS = frozenset({
    "PythonOperator", "BranchPythonOperator", "ShortCircuitOperator", "PythonVirtualenvOperator",
    "BranchPythonVirtualenvOperator", "ExternalPythonOperator", "BranchExternalPythonOperator",
})
TASKFLOW = ""  # the class name of a TaskFlow task: its decorator makes a Python operator
_DATE_BRANCHES = frozenset({"BranchDateTimeOperator", "BranchDayOfWeekOperator", "DayOfWeekSensor"})
# argument -> (the Airflow operator classes it is checked on, and their subclasses; None for
# every operator, as BaseOperator itself rejects it; advice)
REMOVED: dict[str, tuple[Optional[frozenset[str]], str]] = {
    "task_concurrency": (None, "use max_active_tis_per_dag=..."),
    "provide_context": (_PYTHON_OPERATORS | {TASKFLOW}, "remove it; Airflow 3 passes the context to a callable "
                                           "that takes **context or names a context key"),
    # ExternalTaskMarker's was renamed with Airflow 3 (providers/standard/sensors/external_task.py).
    "execution_date": (frozenset({"TriggerDagRunOperator", "ExternalTaskMarker"}), "use logical_date=..."),
    "use_task_execution_day": (_DATE_BRANCHES, "use use_task_logical_date=..."),
}
# Airflow 3 dropped this trigger rule: the string raises ValueError, the enum member AttributeError.
REMOVED_TRIGGER_RULE = "none_failed_or_skipped"
TRIGGER_RULE_HELP = 'use trigger_rule="none_failed_min_one_success"'
NEW_TRIGGER_RULE = "none_failed_min_one_success"
# The removed arguments whose value Airflow 3 takes under another name.
RENAMED = {"task_concurrency": "max_active_tis_per_dag", "execution_date": "logical_date",
           "use_task_execution_day": "use_task_logical_date"}


class RemovedOperatorArgument(Rule):
    code = "DG109"
    name = "removed-operator-argument"
    severity = "error"
    summary = "A task passes an argument Airflow 3 rejects (task_concurrency, provide_context...)"
    fixable = True

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        severity = "warning" if context.settings.airflow_version == "2" else None
        seen: set[int] = set()   # a @task decorator shared by several calls is reported once
        for dag in file.dags:
            # default_args reach every task, and a trigger rule in them is validated there.
            arg = dag.default_args.get("trigger_rule")
            found = _trigger_rule_removal(arg, arg.read_in(dag.scope)) if arg is not None else None
            if found is not None:
                # A value another module writes is fixed there, not from this file.
                fix = _trigger_rule_fix(arg) if arg.written_in(file.scope) else None
                yield Report(node=arg.report_node, message=f"{dag.label} default_args {found[0]}, for every task",
                             help=found[1], dag=dag, severity=severity, fix=fix)
        for task in file.every_task():
            operator = _operator_class(task)
            if operator is None:
                continue
            for name, arg in task.args.values.items():
                if id(arg.report_node) in seen:
                    continue
                found = _removal(name, arg, operator, arg.read_in(task.scope))
                if found is not None:
                    seen.add(id(arg.report_node))
                    message, help_ = found
                    yield Report(node=arg.report_node, message=f"{task.label} {message}", help=help_,
                                 severity=severity, fix=_fix(name, arg, task))


def _operator_class(task: TaskModel) -> Optional[OperatorClass]:
    """The task's operator class (TASKFLOW's for a TaskFlow task), None when it may be no operator."""
    if task.kind == "taskflow":
        return OperatorClass(TASKFLOW, frozenset({TASKFLOW}))
    return task_operator_class(task)


def _trigger_rule_removal(arg: ArgValue, scope: Scope) -> Optional[tuple[str, str]]:
    if arg.value == REMOVED_TRIGGER_RULE:
        return f"sets trigger_rule '{REMOVED_TRIGGER_RULE}', which Airflow 3 rejects with a ValueError", \
            TRIGGER_RULE_HELP
    qual = scope.qualname(arg.node)
    if qual is not None and qual.startswith("airflow.") and qual.endswith(".TriggerRule.NONE_FAILED_OR_SKIPPED"):
        return "uses TriggerRule.NONE_FAILED_OR_SKIPPED, which Airflow 3 removed (AttributeError)", \
            TRIGGER_RULE_HELP
    return None


def _removal(name: str, arg: ArgValue, operator: OperatorClass, scope: Scope) -> Optional[tuple[str, str]]:
    if name in operator.own_names:
        return None   # a class of the project that takes the name itself
    if name == "trigger_rule":
        return _trigger_rule_removal(arg, scope)
    removal = REMOVED.get(name)
    if removal is None:
        return None
    classes, help_ = removal
    if classes is not None and not classes & operator.airflow_classes:
        return None
    return f"passes {name}, which Airflow 3 rejects with a TypeError", help_


def _fix(name: str, arg: ArgValue, task: TaskModel) -> Optional[Fix]:
    if name == "trigger_rule":
        return _trigger_rule_fix(arg) if arg.written_in(task.scope) else None
    written = written_keyword(arg)
    if name == "provide_context" and written is not None and isinstance(task.node, cst.Call) \
            and any(a is written for a in task.node.args):
        # Airflow 2 already ignored it (the context has been passed since 2.0).
        return Fix("remove provide_context=", SAFE, remove_argument(task.node, written))
    return rename_fix(task.args, name, written, RENAMED.get(name))


def _trigger_rule_fix(arg: ArgValue) -> Optional[Fix]:
    """Airflow 3's name for the same rule, in the string's own quotes or on the same enum."""
    node = arg.node
    if isinstance(node, cst.SimpleString) and REMOVED_TRIGGER_RULE in node.value:
        new = node.with_changes(value=node.value.replace(REMOVED_TRIGGER_RULE, NEW_TRIGGER_RULE))
    elif isinstance(node, cst.Attribute) and node.attr.value == REMOVED_TRIGGER_RULE.upper():
        new = node.with_changes(attr=node.attr.with_changes(value=NEW_TRIGGER_RULE.upper()))
    else:
        return None
    return Fix(f"use trigger rule {NEW_TRIGGER_RULE}", SAFE, ((node, new),))
