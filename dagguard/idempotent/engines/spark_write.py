"""One Spark write: the rows the write owns (its scope, whole partitions of the table) replaced
by the new rows in one dynamic partition overwrite, then the scope's partitions the new rows
left empty dropped.

Spark's Parquet tables (no Delta or Iceberg jars) cannot delete or update rows, only replace
partitions: `INSERT OVERWRITE` with `spark.sql.sources.partitionOverwriteMode=dynamic`
replaces exactly the partitions its rows fall in and leaves every other partition's files
alone. A merge is planned as a join of the scope's rows with the batch, computed once into a
local checkpoint while the same job counts the inserted, updated and deleted rows, and its
result written the same way.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from dagguard.idempotent.arrow.fingerprint import fingerprint_checksum

# Writes of one process take turns, from reading the interval to dropping its stale partitions:
# two threads replacing the same interval's partitions at once could leave some of each one's
# (Parquet tables detect no conflict), and the session's overwrite mode is set for one write.
WRITE_LOCK = threading.RLock()
_MODE = "spark.sql.sources.partitionOverwriteMode"
# Marks the side of the merge's join a row came from.
_TARGET, _SOURCE = "__dagguard_t", "__dagguard_s"
# How long the driver waits for a finished job's observed metrics.
_OBSERVATION_WAIT = 60.0


@dataclass(frozen=True)
class Plan:
    """What the write puts in the scope (None: nothing changes) and what it counts."""

    rows: Any
    inserted: int
    updated: int
    deleted: int


def fingerprint(frame: Any, columns: list[str]) -> tuple[int, int, int]:
    """(row count, sum of 64-bit hashes, sum of 32-bit hashes) of the rows over `columns`: equal
    for equal multisets of rows whatever their order, computed as one aggregation. Each value
    is hashed with its NULL flag, so (1, NULL) and (NULL, 1) differ."""
    return fingerprint_of(frame.agg(*fingerprint_aggregates(columns)).first(), 0)


def fingerprint_aggregates(columns: list[str], prefix: str | None = None) -> list[Any]:
    """fingerprint's aggregate expressions, to run alongside others in one Spark job. The 64-bit
    hashes are summed in three bigint parts (bits 42-63 signed, 21-41, 0-20), exact for fewer
    than 2**41 rows: a sum of the hashes cast to decimal(38,0) gives the same number but took
    twice as long (0.75 s against 0.41 s over a million cached rows). Named `<prefix><n>` when
    given a prefix. Written as SQL text, one parse each: built of pyspark's column functions
    they took 50-90 calls into the JVM, 0.05-0.1 s of the driver's time a write."""
    from pyspark.sql import functions as F

    parts = ", ".join(f"{name}, isnull({name})" for name in (quoted_name(c) for c in sorted(columns)))
    wide = f"xxhash64({parts})"
    texts = ["count(1)", f"sum(shiftright({wide}, 42))", f"sum(shiftright({wide}, 21) & {2**21 - 1})",
             f"sum({wide} & {2**21 - 1})", f"sum(cast(hash({parts}) as bigint))"]
    return [F.expr(text if prefix is None else f"{text} AS {prefix}{at}") for at, text in enumerate(texts)]


def quoted_name(column: str) -> str:
    """`column` as a Spark SQL identifier."""
    return "`" + column.replace("`", "``") + "`"


def fingerprint_of(found: Any, at: int) -> tuple[int, int, int]:
    """The fingerprint from the row of fingerprint_aggregates, placed from column `at` on."""
    high, middle, low = (int(found[at + i] or 0) for i in (1, 2, 3))
    return int(found[at]), (high << 42) + (middle << 21) + low, int(found[at + 4] or 0)


def as_checksum(found: tuple[int, int, int], version: tuple[int, ...]) -> str:
    """`rows:spark4.3-<hex>.<hex>`: a checksum of its own kind, compared with its kind only."""
    return fingerprint_checksum((found[0], found[1] & (2**128 - 1), found[2] & (2**64 - 1)),
                                "spark" + ".".join(str(v) for v in version[:2]))


def plan_merge(current: Any, batch: Any, keys: tuple[str, ...], table_columns: list[str],
               delete_missing: bool) -> Plan:
    """The scope's rows after merging `batch` into `current` on `keys` (NULL matching NULL):
    matched rows take the batch's values, unmatched batch rows are inserted, unmatched current
    rows kept (deleted with delete_missing). Joined once, counted while kept; None rows when
    nothing changes."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    t = current.select(*[F.col(c).alias(f"t_{c}") for c in table_columns], F.lit(True).alias(_TARGET))
    s = batch.select(*[F.col(c).alias(f"s_{c}") for c in batch.columns], F.lit(True).alias(_SOURCE))
    on = [F.col(f"t_{k}").eqNullSafe(F.col(f"s_{k}")) for k in keys]
    joined = t.join(s, on=on[0] if len(on) == 1 else _all(on), how="full_outer")
    in_t, in_s = F.col(_TARGET).isNotNull(), F.col(_SOURCE).isNotNull()
    values = [c for c in batch.columns if c not in keys]
    same = _all([F.col(f"t_{c}").eqNullSafe(F.col(f"s_{c}")) for c in values]) if values else F.lit(True)
    metrics = [F.count(F.when(in_s & ~in_t, 1)).alias("inserted"),
               F.count(F.when(in_s & in_t & ~same, 1)).alias("updated"),
               F.count(F.when(in_t & ~in_s, 1)).alias("missing")]
    # The join computed once: its result kept (a local checkpoint, as a hand-written merge keeps
    # it: Spark refuses to overwrite a table its plan reads), its counts observed while it is
    # kept; before, one job joined to count and the write joined again (2.3-2.6x the
    # hand-written merge of a changed batch).
    counted = Observation() if getattr(joined, "_jdf", None) is not None else None
    merged = (joined if counted is None else joined.observe(counted, *metrics)).select(*[
        (F.when(in_s, F.col(f"s_{c}")).otherwise(F.col(f"t_{c}")) if c in batch.columns else F.col(f"t_{c}")).alias(c)
        for c in table_columns], in_s.alias(_SOURCE))
    if counted is None:  # Spark Connect: counted by a job, joined again to write
        kept, counts = merged, joined.agg(*metrics).first().asDict()
    else:
        kept = merged.localCheckpoint()
        counts = observed(counted)
    inserted, updated, missing = int(counts["inserted"]), int(counts["updated"]), int(counts["missing"])
    deleted = missing if delete_missing else 0
    if not (inserted or updated or deleted):
        return Plan(None, 0, 0, 0)
    rows = kept.where(F.col(_SOURCE)) if delete_missing else kept
    return Plan(rows.select(*table_columns), inserted, updated, deleted)


def observed(observation: Any) -> dict[str, Any]:
    """The metrics of `observation` once the job that ran it has reported them (Spark's listener
    bus delivers them after the job, normally within milliseconds)."""
    future = observation._jo.future()
    deadline = time.monotonic() + _OBSERVATION_WAIT
    while not future.isCompleted():
        if time.monotonic() > deadline:
            raise AssertionError("Spark did not report the metrics of a finished job")
        time.sleep(0.002)
    return observation.get


def _all(conditions: list[Any]) -> Any:
    combined = conditions[0]
    for condition in conditions[1:]:
        combined = combined & condition
    return combined


def stale_partitions(current: Any, new_rows: Any | None, partition_types: dict[str, str]) -> list[dict[str, Any]]:
    """The scope's partitions that the new rows leave empty (all of them when there are no new
    rows), as {column: value}: partition values only come back, never rows. Timestamps come
    back as UTC instants (as microseconds, which no time zone of the driver can shift)."""
    names = list(partition_types)
    existing = current.select(*names).distinct()
    if new_rows is not None:
        written = new_rows.select(*names).distinct()
        on = _all([existing[c].eqNullSafe(written[c]) for c in names])
        existing = existing.join(written, on=on, how="left_anti")
    return _partition_values(existing.select(*_exact(names, partition_types)).collect(), partition_types)


def partitions_in_folders(current: Any, folders: list[str], partition_types: dict[str, str]) -> list[dict[str, Any]]:
    """The partitions of `current` whose files lie in `folders` (URIs as spark_scope lists
    them), as stale_partitions gives them: one small job reading no column but the partition
    columns, its result a row per file."""
    from urllib.parse import unquote, urlparse

    from pyspark.sql import functions as F

    names = list(partition_types)
    wanted = {unquote(urlparse(folder).path) for folder in folders}
    found = current.select(*_exact(names, partition_types), F.input_file_name().alias("__dagguard_file")).distinct()
    rows = [row for row in found.collect() if unquote(urlparse(row["__dagguard_file"]).path).rpartition("/")[0] in wanted]
    unique = {tuple(row[name] for name in names): row for row in rows}
    return _partition_values(list(unique.values()), partition_types)


def _exact(names: list[str], partition_types: dict[str, str]) -> list[Any]:
    from pyspark.sql import functions as F

    return [F.unix_micros(F.col(c)).alias(c) if partition_types[c] == "timestamp" else F.col(c) for c in names]


def _partition_values(rows: list[Any], partition_types: dict[str, str]) -> list[dict[str, Any]]:
    """Rows of _exact's partition values as {column: value}, timestamps as UTC instants."""
    from datetime import datetime, timedelta, timezone

    names = list(partition_types)
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    found = []
    for row in rows:
        values = {name: row[name] for name in names}
        for name in names:
            if partition_types[name] == "timestamp" and values[name] is not None:
                values[name] = epoch + timedelta(microseconds=values[name])
        found.append(values)
    return found


def overwrite_partitions(spark: Any, table: str, rows: Any, stale: list[dict[str, Any]],
                         partition_types: dict[str, str]) -> None:
    """Replace the partitions `rows` fall in with `rows` (dynamic partition overwrite, the mode
    set for this write only), then drop the `stale` partitions; no other partition is touched."""
    if rows is not None:
        with _overwrite_mode(spark, "dynamic"):
            rows.write.insertInto(table, overwrite=True)
    if stale:
        specs = ", ".join("PARTITION (" + ", ".join(f"`{name}` = {sql_literal(row[name], partition_types[name])}"
                                                     for name in partition_types) + ")" for row in stale)
        spark.sql(f"ALTER TABLE {table} DROP IF EXISTS {specs}")


@contextmanager
def _overwrite_mode(spark: Any, mode: str) -> Iterator[None]:
    """The session's partition overwrite mode set to `mode` around one write, then restored."""
    with WRITE_LOCK:
        before = spark.conf.get(_MODE, None)
        spark.conf.set(_MODE, mode)
        try:
            yield
        finally:
            if before is None:
                spark.conf.unset(_MODE)
            else:
                spark.conf.set(_MODE, before)


def sql_literal(value: Any, declared: str) -> str:
    """A value (a partition value, an interval bound, a message) as a typed Spark SQL literal
    (timestamps as UTC instants)."""
    from datetime import date, datetime, timezone

    if value is None:
        return "NULL"
    if isinstance(value, datetime):
        instant = value.astimezone(timezone.utc) if value.tzinfo else value
        suffix = "+00:00" if value.tzinfo else ""
        kind = "TIMESTAMP_NTZ" if declared == "timestamp_ntz" else "TIMESTAMP"
        return f"{kind} '{instant.strftime('%Y-%m-%d %H:%M:%S.%f')}{suffix}'"
    if isinstance(value, date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"
