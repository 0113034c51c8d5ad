"""@idempotent_write: the TaskFlow decorator that writes a task's returned rows for its interval."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Mapping, Sequence, TypeVar

from dagguard.idempotent.errors import require_airflow
from dagguard.idempotent.interval import Interval, interval_from_context
from dagguard.idempotent.ledger import RunInfo

F = TypeVar("F", bound=Callable[..., Any])

# Parameters of the wrapped function that are filled from the run when left as None.
CONTEXT_PARAMETERS = ("data_interval_start", "data_interval_end", "ds", "logical_date")


def run_info_from_context(context: Mapping[str, Any]) -> RunInfo:
    """dag_id, task_id, run_id and try_number of the running task instance, where present."""
    ti = context.get("ti") or context.get("task_instance")
    return RunInfo(
        dag_id=getattr(ti, "dag_id", None), task_id=getattr(ti, "task_id", None),
        run_id=context.get("run_id") or getattr(ti, "run_id", None),
        try_number=getattr(ti, "try_number", None))


def _context_values(context: Mapping[str, Any], interval: Interval) -> dict[str, Any]:
    return {"data_interval_start": interval.start, "data_interval_end": interval.end,
            "ds": context.get("ds") or interval.partition_key.isoformat(),
            "logical_date": context.get("logical_date")}


def fill_context_arguments(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                           values: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Fill parameters named like CONTEXT_PARAMETERS that the caller left unset or None."""
    signature = inspect.signature(function)
    bound = signature.bind_partial(*args, **kwargs)
    for name in CONTEXT_PARAMETERS:
        if name in signature.parameters and bound.arguments.get(name) is None:
            bound.arguments[name] = values[name]
    return bound.args, bound.kwargs


def idempotent_write(*, conn_id: str | None = None, table: str, time_column: str | None = None,
                     unique_key: Sequence[str] | str | None = None, strategy: str = "replace",
                     delete_missing: bool = False, partition_column: str = "ds",
                     columns: Sequence[str] | None = None) -> Callable[[F], F]:
    """Write what the decorated task returns as the content of its run's data interval.

    Put it under `@task`. The function's `data_interval_start`, `data_interval_end`, `ds` and
    `logical_date` parameters are filled from the run; it returns rows (dicts, tuples with
    `columns=`, a DataFrame or an Arrow table). The task returns the write's result as a dict.
    Without `conn_id`, under `@task.pyspark`, it writes through the `spark` session the task
    receives (the function takes a `spark` parameter), into a table of that session's catalog.
    """
    from dagguard.idempotent.write import WriteSpec

    require_airflow("@idempotent_write")
    # Fail at DAG parse time, not at run time, on a bad name or strategy.
    WriteSpec.build(table, strategy, time_column, unique_key, delete_missing, partition_column)

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

            context = get_current_context()
            interval = interval_from_context(context)  # before any work: nothing to write into
            args, kwargs = fill_context_arguments(function, args, kwargs, _context_values(context, interval))
            rows = function(*args, **kwargs)
            # No conn_id: the SparkSession that @task.pyspark passed to the task.
            conn = conn_id if conn_id is not None else inspect.signature(function).bind_partial(
                *args, **kwargs).arguments.get("spark")
            result = write_interval(conn, table, rows, interval, time_column=time_column,
                                    unique_key=unique_key, strategy=strategy,
                                    delete_missing=delete_missing, partition_column=partition_column,
                                    columns=columns, run=run_info_from_context(context))
            return result.to_dict()

        return wrapper  # type: ignore[return-value]

    return decorate
