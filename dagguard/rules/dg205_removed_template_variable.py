"""DG205: a template variable or context key that Airflow 3 removed."""

from __future__ import annotations

import re
from typing import Iterable, Iterator, Optional

import libcst as cst

from dagguard.model.tasks.assembled_strings import Piece
from dagguard.model.basics.context_keys import REMOVED_KEYS
from dagguard.model.dags.models import DagModel, FileModel
from dagguard.model.tasks.loose_callables import loose_callables
from dagguard.model.tasks.python_tasks import CallableFacts
from dagguard.model.tasks.task_io import file_task_ios, loose_task_strings
from dagguard.model.sql.templates import Template
from dagguard.model.schedules.schedules import Recurrence, dag_recurrence
from dagguard.model.basics.tree import child_nodes
from dagguard.model.schedules.trigger_runs import dag_trigger_schedule
from dagguard.rules.base import SAFE, UNSAFE, Fix, Report, Rule, RuleContext

# Keys whose replacement reads data_interval_end, which on a trigger timetable is the run's
# own logical date, not the next one as these keys were.
NEXT_KEYS = frozenset({"next_ds", "next_ds_nodash", "next_execution_date"})

# What Python code reading the context should use instead: keys still in the context, and code
# for the values that were computed from them (macros and filters exist only in templates).
_PREVIOUS = 'context["prev_data_interval_start_success"] (None until a run succeeded)'
PYTHON_REPLACEMENTS = {
    "execution_date": 'context["logical_date"]',
    "next_ds": 'context["data_interval_end"].strftime("%Y-%m-%d")',
    "next_ds_nodash": 'context["data_interval_end"].strftime("%Y%m%d")',
    "next_execution_date": 'context["data_interval_end"]',
    "prev_ds": _PREVIOUS,
    "prev_ds_nodash": _PREVIOUS,
    "prev_execution_date": _PREVIOUS,
    "prev_execution_date_success": _PREVIOUS,
    "tomorrow_ds": '(context["logical_date"] + timedelta(days=1)).strftime("%Y-%m-%d")',
    "tomorrow_ds_nodash": '(context["logical_date"] + timedelta(days=1)).strftime("%Y%m%d")',
    "yesterday_ds": '(context["logical_date"] - timedelta(days=1)).strftime("%Y-%m-%d")',
    "yesterday_ds_nodash": '(context["logical_date"] - timedelta(days=1)).strftime("%Y%m%d")',
    "conf": "airflow.configuration.conf, or a Variable",
    "triggering_dataset_events": 'context["triggering_asset_events"]',
}
# The replacements Airflow 2.11 itself gave (airflow/utils/context.py, _DEPRECATION_REPLACEMENTS):
# a template expression that is the key alone, and the key as a name anywhere in an expression
# or as a context lookup (only those that map to a plain name).
TEMPLATE_FIXES = {"execution_date": "logical_date", "next_ds": "data_interval_end | ds",
                  "next_ds_nodash": "data_interval_end | ds_nodash", "next_execution_date": "data_interval_end",
                  "prev_execution_date_success": "prev_data_interval_start_success"}
NAME_FIXES = {k: v for k, v in TEMPLATE_FIXES.items() if "|" not in v}
# A `{{ }}`, or one the literal leaves open for the next piece of a string built with `+`.
_EXPRESSION = re.compile(r"\{\{(.*?)(?:\}\}|\Z)", re.DOTALL)
_JINJA_REGION = re.compile(r"\{[{%](.*?)(?:[}%]\}|\Z)", re.DOTALL)

# What replaces a removed attribute of the run (dag_run.execution_date...).
RUN_ATTRIBUTE_REPLACEMENTS = {"external_trigger": "run_type"}


def replacement(key: str) -> str:
    """What to use instead of a removed key (or `dag_run.execution_date`)."""
    if "." in key:
        owner, attribute = key.split(".", 1)
        return f"{owner}.{RUN_ATTRIBUTE_REPLACEMENTS.get(attribute, 'logical_date')}"
    return REMOVED_KEYS.get(key, "logical_date")


def python_replacement(key: str) -> str:
    """What Python code reading the context should use instead of a removed key."""
    if "." in key:
        return replacement(key)
    return PYTHON_REPLACEMENTS.get(key, 'context["logical_date"]')


def template_help(key: str, schedule: str | None) -> str:
    """The advice for a removed template variable, on the DAG's schedule (`schedule` when it
    is an Airflow 3 trigger timetable)."""
    advice = f"use {{{{ {replacement(key)} }}}}"
    if schedule is None or key not in NEXT_KEYS:
        return advice
    return (f"{advice} with a data-interval timetable; on {schedule}, a trigger timetable, "
            "data_interval_end is the run's own logical date (the next day is {{ macros.ds_add(ds, 1) }})")


class RemovedTemplateVariable(Rule):
    code = "DG205"
    name = "removed-template-variable"
    severity = "error"
    summary = "A template variable or context key removed in Airflow 3 (execution_date, next_ds...)"
    fixable = True

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        severity = "warning" if context.settings.airflow_version == "2" else None
        seen: set[int] = set()
        reported_pieces: set[int] = set()   # a constant's piece that several tasks' strings share
        for io in file_task_ios(file, context.path):
            schedule = dag_trigger_schedule(file, io.dag, context.settings)
            safety = SAFE if _on_data_intervals(io.dag, context) else UNSAFE
            templated = [(s.node, s.argument, s.template, s.pieces) for s in io.strings]
            templated += [(s.node, s.origin, s.template, ()) for s in io.sql if s.template is not None]
            yield from _template_reports(io.label, templated, schedule, safety, severity, seen, reported_pieces)
            if io.callable is not None:
                yield from _lookup_reports(io.label, io.callable, seen, severity, safety)
        # Code no DAG of the file holds fails the same way wherever its DAG is: its templates
        # (an operator made in a factory function) and its context reads.
        for task in file.loose_tasks:
            templated = [(s.node, s.argument, s.template, s.pieces) for s in loose_task_strings(file, task)]
            yield from _template_reports(task.label, templated, None, UNSAFE, severity, seen, reported_pieces)
        for loose in loose_callables(file):
            yield from _lookup_reports(loose.label, loose.facts, seen, severity, UNSAFE, loose.reported_at)


def _template_reports(label: str, templated: list[tuple[cst.CSTNode, str, Template, tuple[Piece, ...]]],
                      schedule: Optional[str], safety: str, severity: Optional[str], seen: set[int],
                      reported_pieces: set[int]) -> Iterator[Report]:
    """One report per removed variable a task's template uses, unless its string was reported."""
    for node, where, template, pieces in templated:
        if id(node) in seen:
            continue
        seen.add(id(node))
        reported_here: set[int] = set()
        for key in template.removed:
            # A string built from pieces: the finding and its fix go to the piece holding the
            # name; a fix in a constant changes its other uses too.
            piece = _piece_holding(pieces, key)
            if piece is not None and id(piece.node) in reported_pieces:
                continue
            target = piece.node if piece is not None else node
            if piece is not None:
                reported_here.add(id(piece.node))
            yield Report(
                node=target,
                message=f"{label} uses {{{{ {key} }}}} in {where}, removed in Airflow 3; the task "
                        "fails to render with UndefinedError",
                help=template_help(key, schedule),
                severity=severity,
                fix=_template_fix(target, key, safety if piece is None or piece.in_argument else UNSAFE),
            )
        reported_pieces |= reported_here


def _lookup_reports(label: str, facts: CallableFacts, seen: set[int], severity: Optional[str],
                    safety: str, reported_at: Optional[cst.CSTNode] = None) -> Iterator[Report]:
    """One report per removed key or run attribute the callable reads, unless already reported.
    Code of another module is reported at `reported_at`, once per key, without a fix."""
    keys: set[str] = set()
    for lookup in facts.removed_lookups:
        if id(lookup.node) in seen or (reported_at is not None and lookup.key in keys):
            continue
        seen.add(id(lookup.node))
        keys.add(lookup.key)
        if "." in lookup.key:
            message = (f"{label} reads {lookup.key}, removed in Airflow 3; it raises AttributeError "
                       "in every run")
        else:
            message = (f"{label} reads the context key '{lookup.key}', removed in Airflow 3; it is "
                       "missing from the context of every run")
        if reported_at is not None:
            yield Report(node=reported_at, message=message, help=f"read {python_replacement(lookup.key)} instead",
                         severity=severity)
            continue
        yield Report(node=lookup.node, message=message, help=f"read {python_replacement(lookup.key)} instead",
                     severity=severity, fix=_lookup_fix(lookup.node, lookup.key, safety))


def _on_data_intervals(dag: Optional[DagModel], context: RuleContext) -> bool:
    """Airflow's replacements give the old values only on a data-interval timetable."""
    if dag is None:
        return False
    settings = context.settings
    rec = dag_recurrence(dag, settings.airflow_version, settings.create_cron_data_intervals)
    return isinstance(rec, Recurrence) and rec.data_interval


def _piece_holding(pieces: tuple[Piece, ...], key: str) -> Optional[Piece]:
    """The first literal piece spelling the removed name (`dag_run.execution_date`: its
    attribute after a dot), or None when no single piece does."""
    owner, _, attribute = key.rpartition(".")
    pattern = re.compile(r"\.\s*" + re.escape(attribute) + r"(?!\w)" if owner
                         else r"(?<![\w.])" + re.escape(key) + r"(?!\w)")
    spelling = [piece for piece in pieces if pattern.search(piece.text)]
    # Rather one spelling it inside a `{{ }}` or `{% %}` (maybe left open) than in plain text.
    inside = [piece for piece in spelling
              if any(pattern.search(m.group(1)) for m in _JINJA_REGION.finditer(piece.text))]
    return (inside or spelling or [None])[0]


def _template_fix(node: cst.CSTNode, key: str, safety: str) -> Optional[Fix]:
    """Airflow's replacement inside the string's `{{ }}`, in its own quotes."""
    if key not in TEMPLATE_FIXES or not isinstance(node, cst.SimpleString):
        return None
    fixed = _EXPRESSION.sub(lambda m: "{{" + _replace_names(m.group(1)) + m.group(0)[2 + len(m.group(1)):],
                            node.value)
    if fixed == node.value:
        return None
    return Fix("use Airflow's replacements for removed template variables", safety,
               ((node, node.with_changes(value=fixed)),))


def _replace_names(expression: str) -> str:
    alone = expression.strip()
    if alone in TEMPLATE_FIXES:
        return expression.replace(alone, TEMPLATE_FIXES[alone])
    # A name, not an attribute (`dag_run.execution_date`) nor a keyword argument.
    return re.sub(r"(?<![\w.])(" + "|".join(NAME_FIXES) + r")(?![\w])(?!\s*=[^=])",
                  lambda m: NAME_FIXES[m.group(1)], expression)


def _lookup_fix(node: cst.CSTNode, key: str, safety: str) -> Optional[Fix]:
    """`context["execution_date"]` -> `context["logical_date"]`, in the string's own quotes."""
    new_key = NAME_FIXES.get(key)
    string = _key_string(node, key) if new_key is not None else None
    if string is None:
        return None
    return Fix(f"read {new_key} instead of {key}", safety,
               ((string, string.with_changes(value=string.value.replace(key, new_key))),))


def _key_string(node: cst.CSTNode, key: str) -> Optional[cst.SimpleString]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.SimpleString) and current.evaluated_value == key:
            return current
        stack.extend(child_nodes(current))
    return None
