"""One local SparkSession for the whole test session (a JVM costs seconds to start): `local[2]`,
two shuffle partitions, no UI, its warehouse in a temporary folder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterator


def start_session(warehouse: Path, master: str = "local[2]", **conf: str) -> Any:
    """A SparkSession on `master` whose catalog keeps its tables under `warehouse`; `conf`:
    more settings, e.g. {"spark.sql.hive.manageFilesourcePartitions": "false"}."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = (builder.master(master).appName("dagguard-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.sql.warehouse.dir", str(warehouse))
               .config("spark.driver.memory", "1g")
               .config("spark.sql.session.timeZone", "UTC")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


def spark_session(warehouse: Path) -> Iterator[Any]:
    """Yield the session, skipping (failing in CI) where pyspark or Java is missing; stop it after."""
    import pytest

    reason = None
    try:
        import pyspark  # noqa: F401
    except ImportError:
        reason = "pyspark is not installed (pip install 'dagguard[spark]')"
    if reason is None and not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        reason = "no Java runtime for Spark (apt-get install openjdk-17-jre-headless)"
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"Spark is required in CI: {reason}")
        pytest.skip(reason)
    session = start_session(warehouse)
    try:
        yield session
    finally:
        session.stop()
