"""@idempotent_write: the TaskFlow decorator that writes a task's returned rows for its interval."""

from __future__ import annotations

import dataclasses
import functools
import inspect
from datetime import timedelta
from typing import Any, Callable, Mapping, Sequence, TypeVar

from dagguard.idempotent.errors import require_airflow
from dagguard.idempotent.ledger import RunInfo
from dagguard.idempotent.partitions import RunScope, write_scope

F = TypeVar("F", bound=Callable[..., Any])

# Parameters of the wrapped function that are filled from the run when left as None.
CONTEXT_PARAMETERS = ("data_interval_start", "data_interval_end", "ds", "logical_date", "partition_key",
                      "partition_date")


def run_info_from_context(context: Mapping[str, Any]) -> RunInfo:
    """dag_id, task_id, run_id and try_number of the running task instance, where present."""
    ti = context.get("ti") or context.get("task_instance")
    return RunInfo(
        dag_id=getattr(ti, "dag_id", None), task_id=getattr(ti, "task_id", None),
        run_id=context.get("run_id") or getattr(ti, "run_id", None),
        try_number=getattr(ti, "try_number", None))


def _context_values(context: Mapping[str, Any], scope: RunScope) -> dict[str, Any]:
    # On a partitioned run, data_interval_start/_end are the partition's period (None in the
    # context itself) where the timetable gives one.
    interval = scope.interval
    return {"data_interval_start": interval.start if interval else None,
            "data_interval_end": interval.end if interval else None,
            "ds": context.get("ds") or (interval.partition_key.isoformat() if interval else None),
            "logical_date": context.get("logical_date"), "partition_key": scope.partition_key,
            "partition_date": context.get("partition_date")}


def _same_instant(value: Any, start: Any) -> bool:
    try:
        return value == start
    except TypeError:  # a naive value the caller passed: not Airflow's
        return False


def widened_scope(scope: RunScope, lookback: int | timedelta | None) -> RunScope:
    """The run's scope with its interval widened by `lookback` (see dagguard.idempotent.lookback)."""
    from dagguard.idempotent.lookback import widen

    if not lookback:
        return scope
    if scope.interval is None:
        from dagguard.idempotent.errors import InvalidArgumentError

        raise InvalidArgumentError(f"lookback={lookback!r} widens the run's interval, and partition "
                                   f"{scope.partition_key!r} has no period (its timetable gives none); "
                                   f"nothing was written")
    return dataclasses.replace(scope, interval=widen(scope.interval, lookback))


def _run_start(scope: RunScope) -> Any:
    return scope.interval.start if scope.interval is not None else None


def fill_context_arguments(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                           values: Mapping[str, Any], run_start: Any = None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Fill parameters named like CONTEXT_PARAMETERS that the caller left unset or None.

    `run_start`: with lookback, the run's own start, which Airflow itself passes as
    `data_interval_start` to a parameter of that name; it is replaced by the widened start."""
    signature = inspect.signature(function)
    bound = signature.bind_partial(*args, **kwargs)
    for name in CONTEXT_PARAMETERS:
        if name in signature.parameters and bound.arguments.get(name) is None:
            bound.arguments[name] = values[name]
    if run_start is not None and "data_interval_start" in signature.parameters:
        given = bound.arguments.get("data_interval_start")
        if given is not None and _same_instant(given, run_start):
            bound.arguments["data_interval_start"] = values["data_interval_start"]
    return bound.args, bound.kwargs


def idempotent_write(*, conn_id: str | None = None, table: str, time_column: str | None = None,
                     unique_key: Sequence[str] | str | None = None, strategy: str = "replace",
                     delete_missing: bool = False, partition_column: str = "ds",
                     columns: Sequence[str] | None = None,
                     lookback: int | timedelta | None = None) -> Callable[[F], F]:
    """Write what the decorated task returns as the content of its run's data interval.

    Put it under `@task`. The function's `data_interval_start`, `data_interval_end`, `ds`,
    `logical_date`, `partition_key` and `partition_date` parameters are filled from the run; it
    returns rows (dicts, tuples with `columns=`, a DataFrame or an Arrow table). The task returns
    the write's result as a dict. On a partitioned run (no data interval) it writes the run's
    partition: the partition's period, or with strategy="overwrite_partition" the rows whose
    `partition_column` equals the partition key; the task's asset outlets are then announced
    with that key (see dagguard.idempotent.outlets). `lookback=N` (or a timedelta) widens the
    run's interval over the N intervals before it: the function receives the widened
    `data_interval_start` and returns the rows of the whole widened interval, late ones included.
    Without `conn_id`, under `@task.pyspark`, it writes through the `spark` session the task
    receives (the function takes a `spark` parameter), into a table of that session's catalog.
    """
    from dagguard.idempotent.lookback import check_lookback
    from dagguard.idempotent.write import WriteSpec

    require_airflow("@idempotent_write")
    # Fail at DAG parse time, not at run time, on a bad name, strategy or lookback.
    WriteSpec.build(table, strategy, time_column, unique_key, delete_missing, partition_column)
    check_lookback(lookback, strategy)

    def decorate(function: F) -> F:
        if conn_id is None and "spark" not in inspect.signature(function).parameters:
            from dagguard.idempotent.errors import InvalidArgumentError

            raise InvalidArgumentError(
                f"@idempotent_write on {function.__name__}() needs conn_id=, or a `spark` parameter filled "
                f"by @task.pyspark to write through that SparkSession")

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
            from airflow.sdk import get_current_context

            from dagguard.idempotent.write import write_interval

            from dagguard.idempotent.outlets import announce_partition

            context = get_current_context()
            # Before any work: a run with nothing to write into fails here, with the fix.
            own = write_scope(context, strategy, partition_column)
            scope = widened_scope(own, lookback)
            args, kwargs = fill_context_arguments(function, args, kwargs, _context_values(context, scope),
                                                  _run_start(own) if scope is not own else None)
            rows = function(*args, **kwargs)
            # No conn_id: the SparkSession that @task.pyspark passed to the task.
            conn = conn_id if conn_id is not None else inspect.signature(function).bind_partial(
                *args, **kwargs).arguments.get("spark")
            result = write_interval(conn, table, rows, scope.interval, time_column=time_column,
                                    unique_key=unique_key, strategy=strategy,
                                    delete_missing=delete_missing, partition_column=partition_column,
                                    columns=columns, run=run_info_from_context(context),
                                    partition_key=scope.partition_key)
            announce_partition(context, result)
            return result.to_dict()

        return wrapper  # type: ignore[return-value]

    return decorate
