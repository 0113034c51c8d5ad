"""The `db` fixture's Delta Lake: a folder of Delta tables that the scenario suite drives like a
database. `create()` and `rows()` speak Delta; `run()` knows CREATE TABLE and CREATE SCHEMA,
and skips a test that needs any other SQL (a trigger, an index, a constraint), which a folder
of Parquet files has no equivalent of."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.idempotent.helpers import Database, normalise, sort_key

# The SQL types the scenarios declare, as Delta (Arrow) types.
_TYPES = {"INTEGER": ("int64",), "BIGINT": ("int64",), "TEXT": ("string",), "VARCHAR": ("string",),
          "DATE": ("date32",), "TIMESTAMPTZ": ("timestamp", "us", "UTC"), "TIMESTAMP": ("timestamp", "us"),
          "DOUBLE": ("float64",), "DOUBLE PRECISION": ("float64",), "BOOLEAN": ("bool_",)}


def arrow_schema(columns: str) -> Any:
    """`k INTEGER, ts TIMESTAMPTZ NOT NULL, v TEXT` as a pyarrow schema."""
    import pyarrow as pa

    fields = []
    for spec in columns.split(","):
        name, *words = spec.split()
        not_null = [w.upper() for w in words[-2:]] == ["NOT", "NULL"]
        kind = " ".join(words[:-2] if not_null else words).upper()
        if kind not in _TYPES:
            pytest.skip(f"Delta tables have no equivalent of the column declaration {spec.strip()!r}")
        factory, *arguments = _TYPES[kind]
        fields.append(pa.field(name.strip('"'), getattr(pa, factory)(*arguments), nullable=not not_null))
    return pa.schema(fields)


class DeltaDatabase(Database):
    """A lake folder: tables are its sub-folders, `connect()` hands out the lake itself."""

    root: Path

    def folder(self, table: str) -> Path:
        return self.root.joinpath(*table.replace('"', "").split("."))

    def run(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        from deltalake import DeltaTable

        statement = " ".join(sql.split())
        table = re.fullmatch(r'CREATE TABLE ("?[\w.]+"?) \((.*)\)', statement, re.IGNORECASE)
        if table:
            DeltaTable.create(str(self.folder(table.group(1))), schema=arrow_schema(table.group(2)))
            return
        dropped = re.fullmatch(r"DROP TABLE IF EXISTS (\w+)", statement, re.IGNORECASE)
        if dropped:
            shutil.rmtree(self.folder(dropped.group(1)), ignore_errors=True)
            return
        schema = re.fullmatch(r"CREATE SCHEMA (\w+)", statement, re.IGNORECASE)
        if schema:
            self.folder(schema.group(1)).mkdir(parents=True, exist_ok=True)
            return
        insert = re.fullmatch(r"INSERT INTO (\w+) VALUES \(\?(?:, \?)*\)", statement, re.IGNORECASE)
        if insert and params:
            import pyarrow as pa
            from deltalake import write_deltalake

            target = DeltaTable(str(self.folder(insert.group(1))))
            schema = pa.schema(target.schema().to_arrow())
            row = pa.Table.from_pylist([dict(zip(schema.names, params))], schema=schema)
            write_deltalake(target, row, mode="append")
            return
        delete = re.fullmatch(r"DELETE FROM (\w+)(?: WHERE (.*))?", statement, re.IGNORECASE)
        if delete:
            DeltaTable(str(self.folder(delete.group(1)))).delete(delete.group(2))
            return
        update = re.fullmatch(r"UPDATE (\w+) SET (\w+) = (.+?)(?: WHERE (.*))?", statement, re.IGNORECASE)
        if update and not params:
            DeltaTable(str(self.folder(update.group(1)))).update(
                updates={update.group(2): update.group(3)}, predicate=update.group(4))
            return
        pytest.skip(f"SQL with no Delta Lake equivalent: {statement[:60]}")

    def create(self, table: str = "events", columns: str = "k INTEGER, ts {ts}, v TEXT") -> str:
        self.run(f"CREATE TABLE {table} ({columns.format(ts=self.ts)})")
        return table

    def rows(self, table: str = "events", columns: str = "*") -> list[tuple[Any, ...]]:
        from deltalake import DeltaTable

        if table == "dagguard_write_log":  # the SQL engines' ledger table: here, each table's own
            folders = sorted(self.root.glob("**/_dagguard/write_log"))
        else:
            folders = [self.folder(table)]
        names = None if columns == "*" else [c.strip().strip('"') for c in columns.split(",")]
        rows = []
        for folder in folders:
            data = DeltaTable(str(folder)).to_pyarrow_table(columns=names)
            rows += [tuple(normalise(v) for v in row.values()) for row in data.to_pylist()]
        return sorted(rows, key=sort_key)


def delta_database(tmp_path: Path) -> DeltaDatabase:
    """A fresh, empty lake in `tmp_path`."""
    from dagguard.idempotent.engines.delta import DeltaLake

    root = tmp_path / "lake"
    root.mkdir()
    db = DeltaDatabase("delta", lambda: DeltaLake(str(root)), f"delta://{root}")
    db.root = root
    return db
