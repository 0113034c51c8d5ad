"""The Iceberg `db` of the scenario suite: a pyiceberg SQL catalog (SQLite) with a file
warehouse, whose tables are created from the suite's SQL-style column lists.

`iceberg` tables are unpartitioned, `iceberg-day` ones partitioned by day(ts) (identity on a
`ds` column): pyiceberg #3758 duplicated rows only on partitioned tables."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The suite's SQL types as Iceberg types (pyiceberg.types class names).
_TYPES = {"INTEGER": "IntegerType", "BIGINT": "LongType", "TEXT": "StringType", "DATE": "DateType",
          "TIMESTAMPTZ": "TimestamptzType", "TIMESTAMP": "TimestampType",
          "TIMESTAMP_NS": "TimestampNanoType", "TIMESTAMPTZ_NS": "TimestamptzNanoType",
          "DOUBLE": "DoubleType", "REAL": "FloatType", "BOOLEAN": "BooleanType"}


def _schema(columns: str) -> Any:
    """An Iceberg schema from `k INTEGER, ts TIMESTAMPTZ NOT NULL, ...`; anything else (keys,
    defaults) is SQL this catalog cannot take, and fails loudly."""
    from pyiceberg import types
    from pyiceberg.schema import Schema

    fields = []
    for number, column in enumerate(columns.split(","), 1):
        name, kind, *rest = column.split()
        required = " ".join(rest).upper() == "NOT NULL"
        if rest and not required:
            raise NotImplementedError(f"Iceberg tables have no {' '.join(rest)!r}")
        fields.append(types.NestedField(number, name, getattr(types, _TYPES[kind.upper()])(), required=required))
    return Schema(*fields)


def _spec(schema: Any, partitioned: bool) -> Any:
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionField, PartitionSpec
    from pyiceberg.transforms import DayTransform, IdentityTransform

    if not partitioned:
        return UNPARTITIONED_PARTITION_SPEC
    names = {field.name: field for field in schema.fields}
    if "ts" in names and str(names["ts"].field_type).startswith("timestamp"):
        return PartitionSpec(PartitionField(names["ts"].field_id, 1000, DayTransform(), "ts_day"))
    if "ds" in names:
        return PartitionSpec(PartitionField(names["ds"].field_id, 1000, IdentityTransform(), "ds"))
    return UNPARTITIONED_PARTITION_SPEC


@dataclass
class IcebergDatabase:
    """The scenario suite's Database on an Iceberg SQL catalog; `connect()` opens the Catalog."""

    path: Path
    partitioned: bool
    dialect: str = "iceberg"
    ts: str = "TIMESTAMPTZ"

    @property
    def url(self) -> str:
        return f"iceberg+sqlite:///{self.path / 'catalog.db'}?warehouse=file://{self.path / 'warehouse'}"

    def connect(self) -> Any:
        from pyiceberg.catalog.sql import SqlCatalog

        return SqlCatalog("default", uri=f"sqlite:///{self.path / 'catalog.db'}",
                          warehouse=f"file://{self.path / 'warehouse'}")

    @staticmethod
    def identifier(table: str) -> tuple[str, ...]:
        parts = tuple(table.split("."))
        return parts if len(parts) > 1 else ("default", table)

    def run(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        """The suite's hand edits another writer would make, done with pyiceberg: `DELETE FROM t`
        and `UPDATE t SET c = 'text' WHERE k = n`; other SQL fails loudly."""
        import re

        import pyarrow.compute as pc

        delete = re.fullmatch(r"DELETE FROM (\w+)", sql)
        update = re.fullmatch(r"UPDATE (\w+) SET (\w+) = '([^']*)' WHERE (\w+) = (\d+)", sql)
        if not (delete or update):
            raise NotImplementedError(f"SQL on an Iceberg catalog: {sql}")
        catalog = self.connect()
        table = catalog.load_table(self.identifier((delete or update).group(1)))
        if delete:
            table.delete("True")
        else:
            _, column, text, key, value = update.groups()
            data = table.scan().to_arrow()
            hit = pc.equal(data.column(key), int(value))
            edited = pc.if_else(hit, pc.cast(text, data.schema.field(column).type), data.column(column))
            table.overwrite(data.set_column(data.schema.get_field_index(column), data.schema.field(column), edited))
        catalog.close()

    def create_schema(self, name: str) -> None:
        catalog = self.connect()
        catalog.create_namespace(name)
        catalog.close()

    def drop(self, table: str = "events") -> None:
        catalog = self.connect()
        if catalog.table_exists(self.identifier(table)):
            catalog.purge_table(self.identifier(table))
        catalog.close()

    def create(self, table: str = "events", columns: str = "k INTEGER, ts {ts}, v TEXT") -> str:
        schema = _schema(columns.format(ts=self.ts))
        catalog = self.connect()
        namespace = self.identifier(table)[:-1]
        catalog.create_namespace_if_not_exists(namespace)
        version = "3" if "_ns" in columns.lower() else "2"
        catalog.create_table(self.identifier(table), schema, partition_spec=_spec(schema, self.partitioned),
                             properties={"format-version": version})
        catalog.close()
        return table

    def rows(self, table: str = "events", columns: str = "*") -> list[tuple[Any, ...]]:
        from tests.idempotent.helpers import normalise, sort_key

        catalog = self.connect()
        try:
            data = catalog.load_table(self.identifier(table)).scan().to_arrow()
        finally:
            catalog.close()
        names = data.column_names if columns == "*" else [c.strip() for c in columns.split(",")]
        values = [data.column(name).to_pylist() for name in names]
        return sorted((tuple(normalise(v) for v in row) for row in zip(*values)), key=sort_key)


def iceberg_database(tmp_path: Path, partitioned: bool) -> IcebergDatabase:
    """A fresh catalog with the namespace `default`."""
    import pytest

    pytest.importorskip("pyiceberg")
    database = IcebergDatabase(tmp_path / ("iceberg-day" if partitioned else "iceberg"), partitioned)
    (database.path / "warehouse").mkdir(parents=True)
    catalog = database.connect()
    catalog.create_namespace("default")
    catalog.close()
    return database
