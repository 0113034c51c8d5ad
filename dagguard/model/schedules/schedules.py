"""What a DAG's schedule means for the scheduler: is it recurring, and how many runs would
catchup create between two instants. Cron arithmetic is croniter's, never hand-written."""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Optional

import libcst as cst

from dagguard.model.basics import airflow_names as names
# Re-exported: the rules and tests import them from here.
from dagguard.model.schedules.run_counts import EXACT_STEPS, Recurrence, _utc, count_runs, format_count  # noqa: F401
from dagguard.model.basics.scope import ConstantBinding
from dagguard.model.basics.values import MAX_DEPTH, UNKNOWN, AssetSchedule, Evaluator, Timetable

PRESETS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@quarterly": "0 0 1 */3 *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
if TYPE_CHECKING:
    from dagguard.model.basics.arguments import ArgValue, Arguments
    from dagguard.model.dags.models import DagModel

NOT_RECURRING = frozenset({"@once", "@continuous"})


def recurrence(schedule: Any, *, present: bool, airflow_version: str,
               create_cron_data_intervals: bool) -> Any:
    """The Recurrence of a schedule value, None when it is not clock-driven, UNKNOWN when unsure."""
    data_interval = airflow_version == "2" or create_cron_data_intervals
    if not present:
        # Airflow 2 defaulted to a daily schedule; Airflow 3 defaults to no schedule.
        return Recurrence((PRESETS["@daily"],), None, True) if airflow_version == "2" else None
    if schedule is None or isinstance(schedule, AssetSchedule):
        return None
    if isinstance(schedule, (list, tuple)):
        return None  # a list of assets/datasets
    if isinstance(schedule, Timetable):
        return _timetable_recurrence(schedule)
    if isinstance(schedule, dt.timedelta):
        return Recurrence(None, schedule, data_interval) if schedule > dt.timedelta(0) else UNKNOWN
    if isinstance(schedule, str):
        text = schedule.strip()
        if text in NOT_RECURRING:
            return None
        cron = PRESETS.get(text, text)
        if _valid_cron(cron):
            return Recurrence((cron,), None, data_interval)
    return UNKNOWN


def _timetable_recurrence(timetable: Timetable) -> Any:
    cron = PRESETS.get(timetable.cron, timetable.cron) if timetable.cron else None
    if cron is not None and not _valid_cron(cron):
        return UNKNOWN  # Airflow rejects it when the file loads; no count to give
    return Recurrence((cron,) if cron else (), timetable.delta, timetable.kind == "data_interval")


# The cron and delta timetables recur whatever their cron or period: one whose argument is not
# static (a Variable, a parameter, a relativedelta) still queues a backlog, of unknown size.
_UNKNOWN_TRIGGER_FIRES = Recurrence((), None, data_interval=False)
_UNKNOWN_DATA_INTERVAL_FIRES = Recurrence((), None, data_interval=True)


def timetable_call(node: cst.BaseExpression, evaluator: Evaluator,
                   depth: int = 0) -> Optional[tuple[cst.Call, str, Evaluator]]:
    """The timetable constructor call `node` is, through module constants (of this file or a
    project module), with the class's qualified name and the evaluator to read its arguments."""
    while isinstance(node, cst.Name) and depth <= MAX_DEPTH:
        found = evaluator.scope.constant(node.value)
        if found is None:
            return None
        node, evaluator = found[0], evaluator if found[1] is evaluator.scope else Evaluator(found[1])
        depth += 1
    if not isinstance(node, cst.Call):
        return None
    qual = evaluator.scope.qualname(node.func)
    return (node, qual, evaluator) if qual is not None else None


def timetable_call_recurrence(node: cst.BaseExpression, evaluator: Evaluator, depth: int = 0) -> Any:
    """The Recurrence of a timetable that the evaluator does not read as a value: several crons,
    cron partitions, assets-or-time, a cron or delta timetable whose argument is not static
    (a Recurrence whose fires are not known), or a class that never catches up (None). UNKNOWN
    otherwise."""
    if depth > MAX_DEPTH:
        return UNKNOWN
    found = timetable_call(node, evaluator, depth)
    if found is None:
        return UNKNOWN
    call, qual, evaluator = found
    if qual in names.NON_RECURRING_TIMETABLES:
        return None
    if qual in names.TRIGGER_TIMETABLES or qual in names.DATA_INTERVAL_TIMETABLES:
        value = evaluator.value(call)
        if isinstance(value, Timetable):
            return _timetable_recurrence(value)
        return _UNKNOWN_TRIGGER_FIRES if qual in names.TRIGGER_TIMETABLES else _UNKNOWN_DATA_INTERVAL_FIRES
    if qual in names.MULTIPLE_CRON_TIMETABLES or qual in names.CRON_PARTITION_TIMETABLES:
        return _cron_trigger_recurrence(call, evaluator)
    if qual in names.ASSET_OR_TIME_SCHEDULES:
        return _asset_or_time_recurrence(call, evaluator, depth)
    return UNKNOWN


def _cron_trigger_recurrence(call: cst.Call, evaluator: Evaluator) -> Any:
    crons: list[str] = []
    unread = False
    for arg in call.args:
        if arg.star:
            unread = True  # *crons hides how many there are
            continue
        if arg.keyword is not None and arg.keyword.value != "cron":
            continue  # timezone, interval, run_offset...: not when runs fire
        value = evaluator.value(arg.value)
        if not isinstance(value, str):
            unread = True
            continue
        cron = PRESETS.get(value, value)
        if not _valid_cron(cron):
            return UNKNOWN  # Airflow rejects it when the file loads
        crons.append(cron)
    # A trigger timetable: no data-interval switch applies to it.
    if unread:
        return _UNKNOWN_TRIGGER_FIRES
    return Recurrence(tuple(crons), None, data_interval=False) if crons else UNKNOWN


def _asset_or_time_recurrence(call: cst.Call, evaluator: Evaluator, depth: int) -> Any:
    # Catchup follows the `timetable=` part; asset events add runs, never a backlog.
    if any(arg.star for arg in call.args):
        return UNKNOWN
    clock = keyword_argument(call, "timetable")
    if clock is None:
        return UNKNOWN
    value = evaluator.value(clock)
    if isinstance(value, Timetable):
        return _timetable_recurrence(value)
    return timetable_call_recurrence(clock, evaluator, depth + 1) if value is UNKNOWN else UNKNOWN


def keyword_argument(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """The expression passed as `name=` in `call`, if any."""
    return next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == name), None)


@lru_cache(maxsize=1024)  # croniter parses the expression anew each time; files repeat theirs
def _valid_cron(expression: str) -> bool:
    from croniter import croniter

    try:
        return bool(croniter.is_valid(expression))
    except Exception:
        return False


def as_datetime(value: Any) -> Optional[dt.datetime]:
    """A static start/end date as an aware datetime (strings parsed as Airflow does)."""
    if isinstance(value, dt.datetime):
        return _utc(value)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    if isinstance(value, str):
        import pendulum

        try:
            parsed = pendulum.parse(value)
        except Exception:
            return None
        if isinstance(parsed, dt.datetime):
            return _utc(parsed)
    return None


# --- facts about one DAG, shared by the scheduling rules ----------------------------------

SCHEDULE_ARGUMENTS = ("schedule", "schedule_interval", "timetable")


def catchup_enabled(dag: "DagModel", airflow_version: str) -> Any:
    """True/False, or UNKNOWN when the DAG's arguments can't be read statically."""
    arg = dag.args.get("catchup")
    if arg is not None:
        return arg.value if isinstance(arg.value, bool) else UNKNOWN
    if not dag.args.complete:
        return UNKNOWN
    # [scheduler] catchup_by_default: True in Airflow 2, False in Airflow 3.
    return airflow_version == "2"


def dag_recurrence(dag: "DagModel", airflow_version: str, create_cron_data_intervals: bool, *,
                   composite_timetables: bool = False) -> Any:
    """The DAG's Recurrence, None when not clock-driven, UNKNOWN when unsure.

    `composite_timetables` also reads the timetables that have no static value (several crons,
    cron partitions, assets-or-time, events...). Off by default: trigger_runs describes a
    schedule by its static value and would mislabel them.
    """
    arg = schedule_argument(dag)
    if arg is not None:
        if arg.value is UNKNOWN and composite_timetables:
            return timetable_call_recurrence(arg.node, Evaluator(arg.read_in(dag.scope)))
        return recurrence(arg.value, present=True, airflow_version=airflow_version,
                          create_cron_data_intervals=create_cron_data_intervals)
    if not dag.args.complete:
        return UNKNOWN
    return recurrence(None, present=False, airflow_version=airflow_version,
                      create_cron_data_intervals=create_cron_data_intervals)


def unread_timetable(dag: "DagModel") -> Optional[tuple[str, Recurrence]]:
    """The class name and Recurrence of the DAG's schedule when it is one of Airflow's recurring
    timetables without a static value (several crons, a cron read from a Variable...)."""
    arg = schedule_argument(dag)
    if arg is None or arg.value is not UNKNOWN:
        return None
    evaluator = Evaluator(dag.scope)
    found = timetable_call(arg.node, evaluator)
    rec = timetable_call_recurrence(arg.node, evaluator) if found is not None else UNKNOWN
    if found is None or not isinstance(rec, Recurrence):
        return None
    return found[1].rsplit(".", 1)[-1], rec


def recurs_on_a_clock(dag: "DagModel", airflow_version: str, create_cron_data_intervals: bool) -> bool:
    """Do recurring fire times start the DAG's runs, so that catchup and backfills can queue many
    at once? False for None, @once, @continuous, assets alone, and schedules not statically known."""
    rec = dag_recurrence(dag, airflow_version, create_cron_data_intervals, composite_timetables=True)
    if rec is UNKNOWN:
        arg = schedule_argument(dag)
        return arg is not None and is_custom_timetable(arg.node, Evaluator(arg.read_in(dag.scope)))
    return isinstance(rec, Recurrence)


# Words in the names of Airflow's timetables that never build a backlog (see
# NON_RECURRING_TIMETABLES): a custom class named like them is taken for one of them.
_NON_RECURRING_WORDS = ("Null", "Once", "Continuous", "Asset", "Dataset", "Partition", "Event")


def is_custom_timetable(node: cst.BaseExpression, evaluator: Evaluator, depth: int = 0) -> bool:
    """`AfterWorkdayTimetable()`: an instance of a class, not one of Airflow's own timetables,
    whose name ends in "Timetable" and does not say it is one of the non-recurring kinds. A
    custom timetable computes its next run from the last one: it recurs, on a calendar of its
    own that the linter cannot count."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(node, cst.Name):
        binding = evaluator.scope.single(node.value)
        return isinstance(binding, ConstantBinding) and is_custom_timetable(binding.value, evaluator, depth + 1)
    if not isinstance(node, cst.Call):
        return False
    qual = evaluator.scope.qualname(node.func)
    if qual is None or qual.startswith(("airflow.timetables.", "airflow.sdk.")):
        return False  # Airflow's own classes are known by name; a new one is not guessed at
    name = qual.rsplit(".", 1)[-1]
    return name.endswith("Timetable") and not any(word in name for word in _NON_RECURRING_WORDS)


def schedule_argument(dag: "DagModel") -> Optional["ArgValue"]:
    """The schedule argument the DAG is read by: the first of SCHEDULE_ARGUMENTS given."""
    return next((dag.args.get(name) for name in SCHEDULE_ARGUMENTS if dag.args.get(name) is not None), None)


def never_scheduled(dag: "DagModel", airflow_version: str) -> bool:
    """Does the scheduler surely never start a run of the DAG (`schedule=None`, or no schedule on
    Airflow 3)? Runs come only from a trigger then, and start_date makes none."""
    arg = schedule_argument(dag)
    if arg is not None:
        return arg.value is None
    return dag.args.complete and airflow_version == "3"


def is_continuous(dag: "DagModel") -> bool:
    """`schedule="@continuous"` or a ContinuousTimetable: Airflow allows it one active run only."""
    arg = schedule_argument(dag)
    if arg is None:
        return False
    if isinstance(arg.value, str):
        return arg.value.strip() == "@continuous"
    call = arg.node
    if not isinstance(call, cst.Call):
        return False
    qual = arg.read_in(dag.scope).qualname(call.func)
    return qual in names.NON_RECURRING_TIMETABLES and qual.endswith(".ContinuousTimetable")


def catching_up(dag: "DagModel", airflow_version: str, create_cron_data_intervals: bool) -> Optional[Recurrence]:
    """The DAG's Recurrence when catchup is certainly on and the schedule is clock-driven."""
    if catchup_enabled(dag, airflow_version) is not True:
        return None
    rec = dag_recurrence(dag, airflow_version, create_cron_data_intervals, composite_timetables=True)
    return rec if isinstance(rec, Recurrence) else None


def date_argument(dag: "DagModel", name: str) -> Optional["ArgValue"]:
    """The start_date/end_date the scheduler goes by: the DAG's unless it is None, else
    default_args' (every task inherits it, and the scheduler bounds runs by the tasks' dates)."""
    for args in (dag.args, dag.default_args):
        arg = args.get(name)
        if arg is not None and arg.value is not None:
            return arg
    return None


def surely_dateless(dag: "DagModel", name: str) -> bool:
    """True only when neither the DAG nor its default_args can set `name`: absent or None."""
    return _absent_or_none(dag.args, name) and _absent_or_none(dag.default_args, name)


def _absent_or_none(args: "Arguments", name: str) -> bool:
    arg = args.get(name)
    # An unresolved `**x` could set it, or (in a dict) override an explicit None.
    return args.complete and (arg is None or arg.value is None)


def dag_date(dag: "DagModel", name: str) -> Optional[dt.datetime]:
    """A static start_date/end_date from the DAG or its default_args."""
    arg = date_argument(dag, name)
    return as_datetime(arg.value) if arg is not None else None

