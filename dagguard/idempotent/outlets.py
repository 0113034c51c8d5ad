"""Announce a partition write on the task's asset outlets, so the partitioned assets downstream
are triggered for the partition that was written.

Called after the write committed: a write that failed raised before, and its task fails, so no
event is emitted for it. Airflow emits an event for every outlet of a successful task anyway
(with the run's partition key); this names the written key explicitly and adds the write's
summary to the event's extra under "dagguard". An unchanged rerun announces the partition again
(Airflow would emit the event without us, and the partition is in the state downstream expects);
the extra carries the write's checksum, the same as the last one's when the rows were the same.
"""

from __future__ import annotations

from typing import Any, Mapping

from dagguard.idempotent.write import WriteResult


def announce_partition(context: Mapping[str, Any], result: WriteResult) -> list[str]:
    """add_partitions(result.partition_key) on each concrete Asset outlet of the running task,
    with the write's summary in the event's extra; the names of the assets announced."""
    key = result.partition_key
    events = context.get("outlet_events")
    task = context.get("task")
    if key is None or events is None or task is None:
        return []
    announced = []
    for outlet in getattr(task, "outlets", None) or ():
        if type(outlet).__name__ not in ("Asset", "Dataset", "Model"):
            continue  # an alias or a reference: Airflow gives it the run's own key
        accessor = events[outlet]
        accessor.add_partitions(key)
        accessor.extra["dagguard"] = _summary(result)
        announced.append(outlet.name)
    return announced


def _summary(result: WriteResult) -> dict[str, Any]:
    return {"table": result.table, "partition_key": result.partition_key, "strategy": result.strategy,
            "row_count": result.row_count, "rows_inserted": result.rows_inserted,
            "rows_updated": result.rows_updated, "rows_deleted": result.rows_deleted,
            "checksum": result.checksum}
