"""DG205: a template variable or context key that Airflow 3 removed."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.context_keys import REMOVED_KEYS
from dagguard.model.dags import FileModel
from dagguard.model.task_io import file_task_ios
from dagguard.rules.base import Report, Rule, RuleContext


def replacement(key: str) -> str:
    """What to use instead of a removed key (or `dag_run.execution_date`)."""
    if "." in key:
        owner = key.split(".", 1)[0]
        return f"{owner}.logical_date"
    return REMOVED_KEYS.get(key, "logical_date")


class RemovedTemplateVariable(Rule):
    code = "DG205"
    name = "removed-template-variable"
    severity = "error"
    summary = "A template variable or context key removed in Airflow 3 (execution_date, next_ds...)"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        severity = "warning" if context.settings.airflow_version == "2" else None
        seen: set[int] = set()
        for io in file_task_ios(file, context.path):
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
                        help=f"use {{{{ {replacement(key)} }}}}",
                        severity=severity,
                    )
            if io.callable is None:
                continue
            for lookup in io.callable.removed_lookups:
                if id(lookup.node) in seen:
                    continue
                seen.add(id(lookup.node))
                yield Report(
                    node=lookup.node,
                    message=f"{io.label} reads the context key '{lookup.key}', removed in Airflow 3; it is "
                            "missing from the context of every run",
                    help=f"read {replacement(lookup.key).split(' |')[0]!r} instead",
                    severity=severity,
                )
