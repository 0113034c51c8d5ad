"""The scenario suite's Database on Spark: a fresh database of the test session's SparkSession
catalog per test, its tables Parquet partitioned on `ts` (or `ds` where there is no `ts`), since
dagguard writes a Spark table only by replacing whole partitions.

`connect()` hands out a new session of the shared one (its own current database and settings,
the same catalog), whose `close()` does nothing: the scenarios close what they connect."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

# The suite's SQL types as Spark SQL types.
_TYPES = {"INTEGER": "INT", "BIGINT": "BIGINT", "TEXT": "STRING", "VARCHAR": "STRING", "DATE": "DATE",
          "TIMESTAMPTZ": "TIMESTAMP", "TIMESTAMP": "TIMESTAMP_NTZ", "DOUBLE": "DOUBLE",
          "DOUBLE PRECISION": "DOUBLE", "BOOLEAN": "BOOLEAN", "REAL": "FLOAT"}


@dataclass
class SparkDatabase:
    """A database of the shared SparkSession's catalog."""

    session: Any
    name: str
    dialect: str = "spark"
    ts: str = "TIMESTAMPTZ"
    url: str = ""
    declared: dict[str, list[str]] = field(default_factory=dict)
    schemas: list[str] = field(default_factory=list)
    # The column tables are partitioned on first: `ds` for a scenario of overwrite_partition,
    # which owns the rows of one `ds` and so needs its partitions.
    partition_first: str = "ts"

    def connect(self) -> Any:
        session = self.session.newSession()
        session.catalog.setCurrentDatabase(self.name)
        session.close = lambda: None  # the shared session outlives the scenario
        session.commit = lambda: None  # (a Spark write commits itself)
        return session

    def qualified(self, table: str) -> str:
        parts = table.replace('"', "").split(".")
        return ".".join(f"`{p}`" for p in (parts if len(parts) > 1 else [self.name, *parts]))

    def run(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        statement = " ".join(sql.split())
        table = re.fullmatch(r'CREATE TABLE ("?[\w.]+"?) \((.*)\)', statement, re.IGNORECASE)
        if table and not params:
            self.create(table.group(1), table.group(2))
            return
        dropped = re.fullmatch(r"DROP TABLE IF EXISTS ([\w.]+)", statement, re.IGNORECASE)
        if dropped:
            self.session.sql(f"DROP TABLE IF EXISTS {self.qualified(dropped.group(1))}")
            return
        schema = re.fullmatch(r"CREATE SCHEMA (\w+)", statement, re.IGNORECASE)
        if schema:
            self.create_schema(schema.group(1))
            return
        pytest.skip(f"SQL that a Parquet table in Spark has no equivalent of (no row-level DELETE, UPDATE, "
                    f"index or constraint without Delta or Iceberg): {statement[:60]}")

    def create_schema(self, name: str) -> None:
        # Databases are the whole catalog's: a scenario's own is dropped when the test ends.
        self.session.sql(f"CREATE DATABASE IF NOT EXISTS `{name}`")
        self.schemas.append(name)

    def drop(self, table: str = "events") -> None:
        self.session.sql(f"DROP TABLE IF EXISTS {self.qualified(table)}")

    def create(self, table: str = "events", columns: str = "k INTEGER, ts {ts}, v TEXT") -> str:
        names, declarations = [], []
        for spec in columns.format(ts=self.ts).split(","):
            name, *words = spec.split()
            not_null = [w.upper() for w in words[-2:]] == ["NOT", "NULL"]
            kind = " ".join(words[:-2] if not_null else words).upper()
            if kind not in _TYPES:
                pytest.skip(f"Spark Parquet tables have no equivalent of the column declaration {spec.strip()!r}")
            names.append(name.strip('"'))
            declarations.append(f"`{names[-1]}` {_TYPES[kind]}{' NOT NULL' if not_null else ''}")
        lowered = {name.lower(): name for name in names}
        other = "ds" if self.partition_first == "ts" else "ts"
        partition = lowered.get(self.partition_first) or lowered.get(other)
        layout = f" PARTITIONED BY (`{partition}`)" if partition else ""
        self.session.sql(f"CREATE TABLE {self.qualified(table)} ({', '.join(declarations)}) USING parquet{layout}")
        self.declared[table.replace('"', "")] = names
        return table

    def rows(self, table: str = "events", columns: str = "*") -> list[tuple[Any, ...]]:
        from pyspark.sql import functions as F

        from tests.idempotent.helpers import UTC, normalise, sort_key

        self.session.catalog.refreshTable(self.qualified(table))  # written by another session
        frame = self.session.table(self.qualified(table))
        names = (self.declared.get(table.replace('"', ""), frame.columns) if columns == "*"
                 else [c.strip().strip('"') for c in columns.split(",")])
        kinds = {f.name: f.dataType.simpleString() for f in frame.schema.fields}
        # Instants as microseconds: no driver time zone can shift them on the way back.
        picked = [F.unix_micros(F.col(n)).alias(n) if kinds.get(n) == "timestamp" else F.col(n) for n in names]
        from datetime import datetime, timedelta

        epoch = datetime(1970, 1, 1, tzinfo=UTC)
        rows = []
        for row in frame.select(*picked).collect():
            values = [epoch + timedelta(microseconds=v) if kinds.get(n) == "timestamp" and v is not None else v
                      for n, v in zip(names, row)]
            rows.append(tuple(normalise(v) for v in values))
        return sorted(rows, key=sort_key)


def spark_database(request: Any) -> SparkDatabase:
    """A fresh database in the test session's SparkSession, dropped when the test ends."""
    session = request.getfixturevalue("spark")
    name = f"t_{uuid.uuid4().hex[:12]}"
    session.sql(f"CREATE DATABASE `{name}`")
    callspec = getattr(request.node, "callspec", None)
    strategy = callspec.params.get("strategy") if callspec is not None else None
    database = SparkDatabase(session, name, partition_first="ds" if strategy == "overwrite_partition" else "ts")

    def drop() -> None:
        for schema in [name, *database.schemas]:
            session.sql(f"DROP DATABASE IF EXISTS `{schema}` CASCADE")

    request.addfinalizer(drop)
    return database
