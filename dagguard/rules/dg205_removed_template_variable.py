"""DG205: a template variable or context key that Airflow 3 removed."""

from __future__ import annotations

from typing import Iterable, Iterator, Optional

from dagguard.model.context_keys import REMOVED_KEYS
from dagguard.model.dags import FileModel
from dagguard.model.loose_callables import loose_callables
from dagguard.model.python_tasks import CallableFacts
from dagguard.model.task_io import file_task_ios
from dagguard.model.trigger_runs import dag_trigger_schedule
from dagguard.rules.base import Report, Rule, RuleContext

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

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        severity = "warning" if context.settings.airflow_version == "2" else None
        seen: set[int] = set()
        for io in file_task_ios(file, context.path):
            schedule = dag_trigger_schedule(file, io.dag, context.settings)
            templated = [(s.node, s.argument, s.template) for s in io.strings]
            templated += [(s.node, s.origin, s.template) for s in io.sql if s.template is not None]
            for node, where, template in templated:
                if id(node) in seen:
                    continue
                seen.add(id(node))
                for key in template.removed:
                    yield Report(
                        node=node,
                        message=f"{io.label} uses {{{{ {key} }}}} in {where}, removed in Airflow 3; the task "
                                "fails to render with UndefinedError",
                        help=template_help(key, schedule),
                        severity=severity,
                    )
            if io.callable is not None:
                yield from _lookup_reports(io.label, io.callable, seen, severity)
        # Code no DAG of the file holds fails the same way wherever its DAG is.
        for loose in loose_callables(file):
            yield from _lookup_reports(loose.label, loose.facts, seen, severity)


def _lookup_reports(label: str, facts: CallableFacts, seen: set[int], severity: Optional[str]) -> Iterator[Report]:
    """One report per removed key or run attribute the callable reads, unless already reported."""
    for lookup in facts.removed_lookups:
        if id(lookup.node) in seen:
            continue
        seen.add(id(lookup.node))
        if "." in lookup.key:
            message = (f"{label} reads {lookup.key}, removed in Airflow 3; it raises AttributeError "
                       "in every run")
        else:
            message = (f"{label} reads the context key '{lookup.key}', removed in Airflow 3; it is "
                       "missing from the context of every run")
        yield Report(node=lookup.node, message=message, help=f"read {python_replacement(lookup.key)} instead",
                     severity=severity)
