"""DG206 on a loaded DAG: on a trigger timetable (data_interval_start == data_interval_end), the
SQL in a task's templated fields selects an empty interval range, or the task writes through
dagguard.idempotent, which refuses an empty interval.

The SQL is what Airflow holds after loading the file: the templated field's value, with `.sql`
files already read in by the DagBag (`resolve_template_files`). It is read by the linter's own
functions (model/sql/templates.py, model/sql/sql.py, model/sql/sql_facts.py); sqlglot and jinja2 are
imported only for a DAG on a trigger timetable whose tasks have templated SQL naming data_interval_end.
"""

from __future__ import annotations

from typing import Any, Iterator

from dagguard.model.basics.airflow_names import IDEMPOTENT_OPERATORS
from dagguard.model.sql.sql import SQL_ARGUMENTS, dialect_for
from dagguard.model.sql.templates import has_jinja
from dagguard.policy.findings import Finding
from dagguard.policy.schedule import trigger_schedule
from dagguard.rules import messages


def _qualname(task: Any) -> str:
    cls = type(task)
    return f"{cls.__module__}.{cls.__qualname__}"


def _sql_texts(task: Any) -> Iterator[str]:
    """The SQL strings in the task's templated fields that hold SQL."""
    for field in getattr(task, "template_fields", ()) or ():
        if field not in SQL_ARGUMENTS:
            continue
        value = getattr(task, field, None)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            # Only a range up to data_interval_end can be empty: other SQL is not parsed, so
            # most DAG processors never import sqlglot.
            if isinstance(item, str) and has_jinja(item) and "data_interval_end" in item:
                yield item


def interval_findings(dag: Any, dag_label: str) -> Iterator[Finding]:
    """DG206's findings on a loaded DAG, one per task at most, as the linter reports them."""
    schedule = trigger_schedule(getattr(dag, "schedule", None), getattr(dag, "timetable", None))
    if schedule is None:
        return
    help_text = messages.empty_interval_help(schedule)
    for task in getattr(dag, "task_dict", {}).values():
        label = f"task '{task.task_id}'"
        if _qualname(task) in IDEMPOTENT_OPERATORS:
            yield Finding("DG206", messages.empty_interval_helper_write(label, dag_label, schedule), help_text)
            continue
        column = _empty_range_column(task)
        if column is not None:
            yield Finding("DG206", messages.empty_interval_range(label, column, dag_label, schedule), help_text)


def _empty_range_column(task: Any) -> Any:
    """The column of the task's first range up to data_interval_end from the interval's start."""
    from dagguard.model.sql.sql import parse_sql
    from dagguard.model.sql.sql_facts import empty_trigger_ranges
    from dagguard.model.sql.templates import analyse_template, display

    dialect = dialect_for(_qualname(task))
    for text in _sql_texts(task):
        template = analyse_template(text)
        for statement in parse_sql(template.text, dialect).statements:
            if statement.tree is None:
                continue
            found = empty_trigger_ranges(statement.tree, template.expression)
            if found:
                return display(found[0].column, [template])
    return None
