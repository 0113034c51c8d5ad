"""The Iceberg rows of benchmarks/idempotent_writes.py: write_interval against the same write by
hand, `Table.overwrite(df, overwrite_filter=<the interval>)`, on a pyiceberg SQL catalog.

`plain` is that hand-written overwrite into a table holding only the other interval (what a
careful task would write); `bare_rewrite` the same call with the changed rows into a table
whose target interval is full. Each timed run gets a catalog of its own, built untimed (an
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
    from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan

    if inputs.form != "arrow":
        raise ValueError("the Iceberg rows are measured with --input arrow")
    target = bench.TARGET
    scope = And(GreaterThanOrEqual("ts", target.start.isoformat()), LessThan("ts", target.end.isoformat()))
    partitioned = name == "iceberg-day"

    def fresh(full: bool) -> tuple[Any, str]:
        catalog, url = _catalog(workdir / f"{name}-{uuid.uuid4().hex[:8]}", partitioned, bench.TABLE)
        table = catalog.load_table(("default", bench.TABLE))
        table.append(_typed(inputs.other, table))
        if full:  # written by dagguard before, as a rerun finds it: rows and ledger entry
            bench.write_target(catalog, inputs, "replace")
        return catalog, url

    def run(case: Any) -> float:
        changed = case.scenario == "changed"
        catalog, _ = fresh(case.scenario != "first")
        try:
            started = time.perf_counter()
            if case.strategy in ("plain", bench.BARE_REWRITE):
                table = catalog.load_table(("default", bench.TABLE))
                table.overwrite(_typed(inputs.changed if changed else inputs.target, table), overwrite_filter=scope)
            else:
                bench.write_target(catalog, inputs, case.strategy, changed=changed)
            seconds = time.perf_counter() - started
            _check(catalog, bench, inputs, changed)
            return seconds
        finally:
            catalog.close()
            shutil.rmtree(catalog.properties["warehouse"].removeprefix("file://"), ignore_errors=True)

    todo = bench.cases(strategies)
    times: dict[str, list[float]] = {case.label: [] for case in todo}
    for repeat in range(runs):
        for case in todo:
            seconds = run(case)
            times[case.label].append(seconds)
            log(f"{name} run {repeat + 1}/{runs} {case.label}: {seconds:.3f}s")
    best = {label: min(values) for label, values in times.items()}
    import pyiceberg

    notes = [f"pyiceberg {pyiceberg.__version__}, SQLite catalog, "
             f"{'day(ts)-partitioned' if partitioned else 'unpartitioned'}; plain = Table.overwrite by hand"]
    return {"engine": name, "notes": notes, "best_seconds": best,
            "ratios": {label: best[label] / best["plain"] for label in best}, "all_seconds": times}


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
