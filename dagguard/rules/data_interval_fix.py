"""The fix DG206 and DG207 share: a cron, preset or timedelta `schedule` becomes the
data-interval timetable Airflow 2 gave it, CronDataIntervalTimetable / DeltaDataIntervalTimetable."""

from __future__ import annotations

import datetime as dt
from typing import Optional

import libcst as cst

from dagguard.model.dags.models import DagModel
from dagguard.model.schedules.schedules import dag_date, date_argument
from dagguard.rules.base import UNSAFE, Fix, Import
from dagguard.rules.edits import written_keyword

CRON = "CronDataIntervalTimetable"
DELTA = "DeltaDataIntervalTimetable"


def data_interval_fix(dag: DagModel) -> Optional[Fix]:
    """`schedule="0 * * * *"` -> `schedule=CronDataIntervalTimetable("0 * * * *", timezone=...)`,
    the timezone of a static start_date, else "UTC"; a timedelta -> DeltaDataIntervalTimetable.
    Unsafe: runs then wait for their interval's end, one period later than now."""
    arg = dag.args.get("schedule")
    written = written_keyword(arg)
    if arg is None or written is None:
        return None
    if isinstance(arg.value, str) and isinstance(arg.node, cst.SimpleString) and not arg.value.startswith("@once") \
            and arg.value != "@continuous":
        timezone = _timezone(dag)
        if timezone is None:
            return None
        new = cst.Call(func=cst.Name(CRON), args=[
            cst.Arg(arg.node, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(cst.SimpleString(_quoted(timezone, arg.node)), keyword=cst.Name("timezone"),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))),
        ])
        name = CRON
    elif isinstance(arg.value, dt.timedelta):
        new = cst.Call(func=cst.Name(DELTA), args=[cst.Arg(arg.node)])
        name = DELTA
    else:
        return None
    return Fix(f"schedule with {name}, as Airflow 2 did", UNSAFE, ((arg.node, new),),
               (Import("airflow.sdk", name),))


def _timezone(dag: DagModel) -> Optional[str]:
    """The zone a static start_date is written in (`tz="Europe/Amsterdam"`, `pendulum.timezone(...)`),
    "UTC" for a naive or UTC one or none at all, None when it is written some other way."""
    arg = date_argument(dag, "start_date")
    if arg is None or dag_date(dag, "start_date") is None:
        return "UTC"
    call = arg.node
    if not isinstance(call, cst.Call):
        return None
    zone = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("tz", "tzinfo")), None)
    if zone is None:
        return "UTC"
    if isinstance(zone, cst.Call) and len(zone.args) == 1:   # pendulum.timezone("..."), ZoneInfo("...")
        zone = zone.args[0].value
    if isinstance(zone, cst.SimpleString) and isinstance(zone.evaluated_value, str):
        return zone.evaluated_value
    return None


def _quoted(text: str, like: cst.SimpleString) -> str:
    quote = like.quote if len(like.quote) == 1 else '"'
    return f"{quote}{text}{quote}"
