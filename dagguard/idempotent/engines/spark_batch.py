"""The batch of a Spark write, typed like its table and checked (see spark_checks), in as few
evaluations of the caller's DataFrame as its rows allow.

The rows written must be the rows checked and counted, even where the DataFrame's plan would
not compute the same rows twice (a random sample, a changing source). Two ways give that:

* persisted (a merge, and any write of a Spark Connect session): the typed batch is cached
  (memory and disk) and every job reads the cache. Building the cache cost 0.9-1.7 s for a
  million rows, more than the hand-written write of them (1.0-1.1 s).
* guarded (replace and overwrite_partition of a classic session): nothing is cached. The write
  job itself fails on a row that breaks a check (each check a column beside the values, and
  `raise_error` where one is true), so a failed check writes nothing, however the rows came
  out that time; and the fingerprint and count recorded are those the write job computed of
  the rows it wrote (an Observation of the write), not those of an earlier evaluation. A first
  write into an empty scope evaluates the batch once, in the write; an earlier job (the checks'
  counts and the fingerprint) runs only where its answer is needed before writing: to tell an
  unchanged rerun, or whether two rows share a unique key.
"""

from __future__ import annotations

from typing import Any

from dagguard.idempotent.engines import spark_checks
from dagguard.idempotent.errors import IntervalViolationError
from dagguard.idempotent.interval import Interval

# The message of the write job's failure when a row breaks a check, found in Spark's error.
_GUARD = "dagguard: a row of the batch failed its checks"


class SparkBatch:
    """The checked, typed batch of one write (release() when done)."""

    def __init__(self, frame: Any, spec: Any, interval: Interval, target: dict[str, str], table: str,
                 partition_value: Any, guarded: bool) -> None:
        from pyspark import StorageLevel

        self.frame, self.spec, self.interval, self.table = frame, spec, interval, table
        self.checks = spark_checks.row_checks(frame, spec, interval, target, table, partition_value)
        # Each check a boolean column beside the typed values: counted in one job with the
        # fingerprint, or failing the write where a row breaks it.
        checked = frame.select(*spark_checks.typed_columns(frame, target, spec, partition_value),
                               *[bad.alias(spark_checks.flag(at)) for at, (_, bad, _) in enumerate(self.checks)])
        self.guarded = guarded
        self.checked = checked if guarded else checked.persist(StorageLevel.MEMORY_AND_DISK)
        self.columns = [c for c in target if c in checked.columns]
        self._fingerprint: tuple[int, int, int] | None = None
        self._observation: Any = None

    @property
    def typed(self) -> Any:
        """The typed rows without their checks' columns (built when asked: each DataFrame Spark
        analyses anew costs the driver 0.05-0.1 s)."""
        return self.checked.select(*self.columns)

    def fingerprint(self) -> tuple[int, int, int]:
        """The batch's fingerprint, checks passed (one Spark job, run once)."""
        if self._fingerprint is None:
            self._fingerprint = spark_checks.batch_fingerprint(self.checked, self.checks, self.columns, self.frame,
                                                               self.spec, self.interval, self.table)
        return self._fingerprint

    def needs_fingerprint_first(self) -> bool:
        """Must the batch be checked and fingerprinted before it is written, whatever the
        scope holds? Yes when persisted (its cache is built there), or for a unique key."""
        return not self.guarded or bool(self.spec.unique_key)

    def rows(self) -> Any:
        """The typed rows to write: from the cache, or guarded and observed (see the module)."""
        if not self.guarded:
            return self.typed
        from pyspark.sql import Observation

        from dagguard.idempotent.engines.spark_write import fingerprint_aggregates, quoted_name, sql_literal

        # (SQL text: one call into the JVM for the projection, one for each aggregate.)
        values = [quoted_name(name) for name in self.columns]
        if self.checks:
            bad = spark_checks.any_flag_sql(len(self.checks))
            values[0] = f"CASE WHEN {bad} THEN raise_error({sql_literal(_GUARD, 'string')}) ELSE {values[0]} END AS {values[0]}"
        rows = self.checked.selectExpr(*values)  # (one projection: each one Spark analyses costs the driver)
        self._observation = Observation()
        return rows.observe(self._observation, *fingerprint_aggregates(self.columns, "f"))

    def written(self) -> tuple[int, int, int]:
        """The fingerprint of the rows the write of rows() wrote."""
        from dagguard.idempotent.engines.spark_write import fingerprint_of, observed

        if self._observation is None:
            return self.fingerprint()
        found = observed(self._observation)
        return fingerprint_of([found[f"f{at}"] for at in range(len(found))], 0)

    def raise_if_check_failed(self, exc: BaseException) -> None:
        """Where the write failed because a row broke a check, raise that check's error."""
        if _GUARD not in str(exc):
            return
        spark_checks.check_frame(self.frame, self.checks, self.interval, self.table)
        raise IntervalViolationError(
            f"row(s) of the batch for {self.table} {self.interval} cannot be written, nothing was written: a row "
            f"failed the checks while being written (the batch computed other rows than when checked)") from exc

    def release(self) -> None:
        if not self.guarded:
            self.checked.unpersist()
