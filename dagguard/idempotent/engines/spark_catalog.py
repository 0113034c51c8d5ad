"""What a Spark write reads of a table's catalog entry: its partition columns and its folder.

Both come from the session catalog's metadata of the table, one call into the JVM (about a
millisecond): `spark.catalog.listColumns` and `DESCRIBE TABLE EXTENDED` answer the same from
the same entry but each runs as a command, 0.1-0.6 s on a loaded machine, every write. A Spark
Connect session (no JVM on the client) and a name the session catalog does not hold (another
catalog's `cat.db.table`) take those commands as before.
"""

from __future__ import annotations

from typing import Any


def _metadata(spark: Any, quoted: str) -> Any:
    """The session catalog's CatalogTable of `quoted`, or None where it cannot be asked."""
    session = getattr(spark, "_jsparkSession", None)
    if session is None:
        return None
    try:
        state = session.sessionState()
        return state.catalog().getTableMetadata(state.sqlParser().parseTableIdentifier(quoted))
    except Exception:  # a name of another catalog, or one the commands will report on
        return None


def partition_columns(spark: Any, quoted: str) -> list[str]:
    """The partition columns of the existing table `quoted`, in the table's order."""
    found = _metadata(spark, quoted)
    if found is None:
        return [column.name for column in spark.catalog.listColumns(quoted) if column.isPartition]
    names = found.partitionColumnNames()
    return [str(names.apply(at)) for at in range(names.length())]


def table_location(spark: Any, quoted: str) -> str:
    """The storage folder (URI) of the catalog table `quoted`, spelled as DESCRIBE spells it."""
    found = _metadata(spark, quoted)
    if found is not None and found.storage().locationUri().isDefined():
        # DESCRIBE prints the location through Hadoop's Path (which decodes %20 and the like).
        return str(spark._jvm.org.apache.hadoop.fs.Path(found.storage().locationUri().get()).toString())
    for row in spark.sql(f"DESCRIBE TABLE EXTENDED {quoted}").collect():
        if row[0] == "Location":
            return str(row[1])
    raise AssertionError(f"Spark describes table {quoted} without a location")
