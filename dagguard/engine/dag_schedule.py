"""One DAG's schedule, start_date and end_date as the model reads them from its file (never
imported), for `dagguard ledger --gaps --dag-file`."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional


class DagScheduleError(Exception):
    """The file cannot be read, the DAG is not in it, or its schedule or dates are not static."""


@dataclass(frozen=True)
class StaticSchedule:
    """A DAG's clock: its cron expressions or period, and its static dates."""

    schedule_text: str
    crons: tuple[str, ...]
    delta: Optional[dt.timedelta]
    start: Optional[dt.datetime]
    end: Optional[dt.datetime]


def read_dag_schedule(path: Path, dag_id: str, *, need_start: bool = True, need_end: bool = True) -> StaticSchedule:
    """The schedule and dates of DAG `dag_id` in `path`, with the project's settings; a date not
    needed (given on the command line) may be unknown, and is None then."""
    from dagguard.config import ConfigError, discover_settings
    from dagguard.engine.files import MAX_FILE_BYTES, UnreadableFile, read_source
    from dagguard.model.dags.builder import build_file_model
    from dagguard.model.project.factories import Resolver
    from dagguard.model.basics.parsing import parse_module
    from dagguard.model.project.project import ProjectIndex, project_layout

    try:
        settings = discover_settings([path])
        source = read_source(path, MAX_FILE_BYTES)
        module = parse_module(source)
    except (ConfigError, UnreadableFile) as exc:
        raise DagScheduleError(f"--dag-file {path}: {exc}") from None
    except Exception as exc:   # libcst's ParserSyntaxError, and odd input
        message = " ".join(str(getattr(exc, "message", exc)).split())
        raise DagScheduleError(f"--dag-file {path}: cannot parse it: {message}") from None
    project = ProjectIndex(*project_layout([path], settings.config_path, settings.src, settings.packages))
    model = build_file_model(module, Resolver(project, path, settings.dag_factories))
    dag = next((d for d in model.dags if d.dag_id == dag_id), None)
    if dag is None:
        seen = ", ".join(sorted({d.dag_id for d in model.dags if d.dag_id is not None})) or "none"
        raise DagScheduleError(f"--dag-file {path}: no DAG {dag_id!r} in it (DAGs with a static id: {seen})")
    return _static_schedule(dag, settings.airflow_version, settings.create_cron_data_intervals, need_start, need_end)


def _static_schedule(dag: Any, airflow_version: str, create_cron_data_intervals: bool, need_start: bool,
                     need_end: bool) -> StaticSchedule:
    from dagguard.model.schedules.schedules import Recurrence, dag_recurrence, schedule_argument, surely_dateless

    rec = dag_recurrence(dag, airflow_version, create_cron_data_intervals, composite_timetables=True)
    if not isinstance(rec, Recurrence) or not rec.fires_known:
        why = "does not recur on a clock" if rec is None else "is not static"
        raise DagScheduleError(f"DAG {dag.dag_id!r}: its schedule {why}, so it has no intervals to check; "
                               f"pass --schedule")
    start = _date(dag, "start_date")
    if start is None and need_start:
        why = " has no start_date" if surely_dateless(dag, "start_date") else ": its start_date is not static"
        raise DagScheduleError(f"DAG {dag.dag_id!r}{why}; pass --start")
    end = _date(dag, "end_date")
    if end is None and need_end and not surely_dateless(dag, "end_date"):
        raise DagScheduleError(f"DAG {dag.dag_id!r}: its end_date is not static; pass --end")
    crons = tuple(rec.crons or ())
    arg = schedule_argument(dag)
    text = arg.value if arg is not None and isinstance(arg.value, str) else ", ".join(crons) or str(rec.delta)
    return StaticSchedule(text, crons, rec.delta, start, end)


def _date(dag: Any, name: str) -> Optional[dt.datetime]:
    from dagguard.model.schedules.schedules import as_datetime, date_argument

    arg = date_argument(dag, name)
    if arg is None:
        return None
    value = arg.value
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value   # its own zone: Airflow reads the DAG's crons in the start_date's
    return as_datetime(value)
