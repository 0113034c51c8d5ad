"""The Iceberg rows of benchmarks/idempotent_writes.py: each strategy of write_interval against
the same write by hand, on a pyiceberg SQL catalog, in the same scenario:

* replace: `Table.overwrite(df, overwrite_filter=<the interval>)`;
* overwrite_partition: `Table.overwrite(df, overwrite_filter=EqualTo("ds", <the day>))`;
* merge: the interval's rows read (`scan(row_filter=<the interval>)`), those whose key the batch
  has dropped, the batch added, and the result written back with one `Table.overwrite` of the
  interval. pyiceberg's own `Table.upsert(df, join_cols=["k"])` is no baseline here: it took 73 s
  for a first write of 1M rows (2026-12-07), matching the keys with an `In` filter of every key.

Each timed run gets a catalog of its own, built untimed (an
Iceberg table's metadata names its files by absolute path, so it cannot be copied as the SQL
engines' files are). `iceberg` is an unpartitioned table, `iceberg-day` one partitioned by
day(ts). Run through idempotent_writes.py: `--engines iceberg iceberg-day`.
"""

from __future__ import annotations

import math
import shutil
import time
import uuid
from pathlib import Path
from typing import Any, Callable

ICEBERG_ENGINES = ("iceberg", "iceberg-day")


def _schema() -> Any:
    from pyiceberg.schema import Schema
    from pyiceberg.types import DateType, DoubleType, LongType, NestedField, StringType, TimestamptzType

    return Schema(NestedField(1, "k", LongType(), required=False), NestedField(2, "ts", TimestamptzType(), required=False),
                  NestedField(3, "ds", DateType(), required=False), NestedField(4, "v", StringType(), required=False),
                  NestedField(5, "amount", DoubleType(), required=False))


def _catalog(root: Path, partitioned: bool, table: str) -> tuple[Any, str]:
    """A fresh SQL catalog under `root` with an empty `default.<table>`; (catalog, its URL)."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionField, PartitionSpec
    from pyiceberg.transforms import DayTransform

    root.mkdir(parents=True)
    catalog = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    catalog.create_namespace("default")
    spec = (PartitionSpec(PartitionField(2, 1000, DayTransform(), "ts_day")) if partitioned
            else UNPARTITIONED_PARTITION_SPEC)
    catalog.create_table(("default", table), _schema(), partition_spec=spec)
    return catalog, f"iceberg+sqlite:///{root}/catalog.db?warehouse=file://{root}"


def _typed(rows: Any, table: Any) -> Any:
    """The Arrow input cast to the table's Arrow schema, as a hand-written write must."""
    return rows.cast(table.schema().as_arrow())


def benchmark_iceberg(name: str, inputs: Any, runs: int, strategies: tuple[str, ...], workdir: Path,
                      log: Callable[[str], None], bench: Any) -> dict[str, Any]:
    """Time every case of idempotent_writes.py (`bench` is that module) on one Iceberg table kind."""
    from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, LessThan

    if inputs.form != "arrow":
        raise ValueError("the Iceberg rows are measured with --input arrow")
    target = bench.TARGET
    scope = And(GreaterThanOrEqual("ts", target.start.isoformat()), LessThan("ts", target.end.isoformat()))
    partitioned = name == "iceberg-day"

    def fresh(written_by: str | None) -> tuple[Any, str]:
        catalog, url = _catalog(workdir / f"{name}-{uuid.uuid4().hex[:8]}", partitioned, bench.TABLE)
        # The other interval through dagguard, as a pipeline's earlier intervals are: the ledger
        # table exists, as the SQL engines' templates have theirs, and a first write appends to it.
        bench.write_interval(catalog, bench.TABLE, inputs.other, bench.OTHER, time_column="ts", strategy="replace")
        if written_by:  # written by that strategy of dagguard before, as its rerun finds it: rows, ledger entry
            bench.write_target(catalog, inputs, written_by)
        return catalog, url

    day = EqualTo("ds", target.start.date().isoformat())

    def run(case: Any) -> tuple[float, float]:
        """(wall seconds, this process's CPU seconds: pyiceberg and pyarrow work in it)."""
        changed = case.scenario == "changed"
        catalog, _ = fresh(case.strategy if case.scenario != "first" else None)
        try:
            started, cpu = time.perf_counter(), time.process_time()
            if case.hand:
                table = catalog.load_table(("default", bench.TABLE))
                rows = _typed(inputs.changed if changed else inputs.target, table)
                if case.strategy == "merge":
                    _merge_by_hand(table, rows, scope)
                else:
                    table.overwrite(rows, overwrite_filter=scope if case.strategy == "replace" else day)
            else:
                bench.write_target(catalog, inputs, case.strategy, changed=changed)
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            _check(catalog, bench, inputs, changed)
            return seconds, cpu
        finally:
            catalog.close()
            shutil.rmtree(catalog.properties["warehouse"].removeprefix("file://"), ignore_errors=True)

    todo = bench.lake_cases(strategies)
    times: dict[str, list[float]] = {case.label: [] for case in todo}
    cpu: dict[str, list[float]] = {case.label: [] for case in todo}
    for repeat in range(runs):
        for case in todo:
            seconds, cpu_seconds = run(case)
            times[case.label].append(seconds)
            cpu[case.label].append(cpu_seconds)
            log(f"{name} run {repeat + 1}/{runs} {case.label}: {seconds:.3f}s (cpu {cpu_seconds:.3f}s)")
    import pyiceberg

    notes = [f"pyiceberg {pyiceberg.__version__}, SQLite catalog, "
             f"{'day(ts)-partitioned' if partitioned else 'unpartitioned'}; by hand: Table.overwrite of the "
             f"interval / of ds = day, merge = the interval read, merged in Arrow, overwritten"]
    return bench.lake_result(name, notes, times, cpu)


def _merge_by_hand(table: Any, rows: Any, scope: Any) -> None:
    """A merge on `k` written by hand: the interval's rows the batch has no key for, plus the
    batch, as the interval's new content in one overwrite."""
    import pyarrow as pa
    import pyarrow.compute as pc

    current = table.scan(row_filter=scope).to_arrow().cast(rows.schema)
    kept = current.filter(pc.invert(pc.is_in(current.column("k"), value_set=rows.column("k"))))
    table.overwrite(pa.concat_tables([kept, rows]), overwrite_filter=scope)


def _check(catalog: Any, bench: Any, inputs: Any, changed: bool) -> None:
    """Untimed: both intervals hold what they should (rows, and the sum of `amount`)."""
    import pyarrow.compute as pc

    data = catalog.load_table(("default", bench.TABLE)).scan().to_arrow()
    expected = {bench.OTHER.start.date(): inputs.other, bench.TARGET.start.date(): inputs.changed if changed
                else inputs.target}
    for day, rows in expected.items():
        mine = data.filter(pc.equal(data.column("ds"), day))
        want = math.fsum(rows.column("amount").to_pylist())
        got = math.fsum(mine.column("amount").to_pylist())
        if len(mine) != len(rows) or not math.isclose(got, want, rel_tol=1e-9):
            raise AssertionError(f"interval {day} holds {len(mine)} rows summing to {got}, expected "
                                 f"{len(rows)} summing to {want}")
    if len(data) != sum(len(rows) for rows in expected.values()):
        raise AssertionError(f"{len(data)} rows, expected {sum(len(r) for r in expected.values())}")
