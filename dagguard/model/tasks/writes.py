"""Does a task write, and where: task-name patterns and transfer operators' destinations."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Optional

from dagguard.model.basics.arguments import ArgValue
from dagguard.model.dags.models import TaskModel

_TRANSFER = re.compile(r"^(?P<source>[A-Za-z0-9]+?)To(?P<dest>[A-Z][A-Za-z0-9]*?)Operator$")
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")

# Destination arguments by the kind of place a transfer operator writes to.
_OBJECT_STORE_DESTINATIONS = {
    "S3": ("dest_s3_key", "s3_key", "dest_key", "key"),
    "GCS": ("destination_object", "dst", "filename", "object_name", "dest_object"),
    "AzureBlobStorage": ("blob_name",),
    "Wasb": ("blob_name",),
    "Adls": ("remote_path", "dest_path"),
    "SFTP": ("sftp_path", "remote_filepath", "destination_path"),
    "FTP": ("remote_filepath", "destination_path"),
    "LocalFilesystem": ("local_filepath", "destination_path", "filename", "path"),
    "Local": ("local_filepath", "destination_path", "filename", "path"),
}
_TABLE_DESTINATIONS = ("destination_project_dataset_table", "destination_table", "dest_table",
                       "target_table", "table", "hive_table", "mysql_table", "postgres_table")
_TABLE_KINDS = frozenset({"BigQuery", "Redshift", "Postgres", "MySql", "Mysql", "Mssql", "Sql", "Hive",
                          "Trino", "Presto", "Vertica", "Oracle", "Teradata", "Exasol", "Databricks",
                          "Sqlite", "Druid", "Sql"})
# Destinations where a write replaces an existing object or file of the same name (S3 and the
# others only with replace=True / overwrite=True).
_OVERWRITING_KINDS = frozenset({"GCS", "LocalFilesystem", "Local"})
# Snowflake's COPY INTO remembers the files it loaded, so a re-run loads nothing twice.
_SKIPPED_KINDS = frozenset({"Snowflake"})


@dataclass(frozen=True)
class Destination:
    """Where a transfer operator writes: the argument naming it and a word for the kind."""

    argument: ArgValue
    kind: str                        # "S3", "BigQuery"...
    operator: str                    # the class's short name


def words(name: str) -> list[str]:
    """`export_ordersToS3` -> ["export", "orders", "to", "s3"] (snake, kebab, dots, camel)."""
    return [w.lower() for w in _WORDS.findall(name)]


def matches_write_pattern(name: Optional[str], patterns: tuple[str, ...]) -> bool:
    """A task or function name that says it writes: a word starting with a pattern
    ("export" matches export_orders and exporter, not reexport), or a glob on the whole name."""
    if not name:
        return False
    found = words(name)
    for pattern in patterns:
        if any(c in pattern for c in "*?["):
            if fnmatch.fnmatch(name.lower(), pattern.lower()):
                return True
        elif any(w.startswith(pattern.lower()) for w in found):
            return True
    return False


def transfer_destination(task: TaskModel) -> Optional[Destination]:
    """The destination argument of a `<Source>To<Destination>Operator`, when it replaces
    nothing by itself (no WRITE_TRUNCATE, REPLACE, UPSERT, recreate...)."""
    if task.kind != "operator" or not task.operator or not task.operator.startswith("airflow."):
        return None
    short = task.operator.rsplit(".", 1)[-1]
    match = _TRANSFER.match(short)
    if match is None:
        return None
    kind = match.group("dest")
    if kind in _SKIPPED_KINDS or _replaces_target(task, kind):
        return None
    names = _OBJECT_STORE_DESTINATIONS.get(kind) or (_TABLE_DESTINATIONS if kind in _TABLE_KINDS else ())
    for name in names:
        arg = task.args.get(name)
        if arg is not None and isinstance(arg.value, str):
            if kind in _OBJECT_STORE_DESTINATIONS and _replaces_fixed_object(task, kind, arg.value):
                return None
            return Destination(arg, kind, short)
    return None


def _replaces_fixed_object(task: TaskModel, kind: str, destination: str) -> bool:
    """One fixed object or file, overwritten on every run (a generated report, a docs site, a
    scratch file): a re-run rewrites the same thing and adds nothing."""
    if "{{" in destination:
        return False
    if kind in _OVERWRITING_KINDS:
        return True
    flags = (task.args.get(name) for name in ("replace", "overwrite"))
    return any(flag is not None and flag.value is True for flag in flags)


def _replaces_target(task: TaskModel, kind: str) -> bool:
    """Arguments that make the write replace the target as a whole, or by key."""
    def value(name: str) -> object:
        arg = task.args.get(name)
        return arg.value if arg is not None else None

    disposition = value("write_disposition")
    if kind == "BigQuery" and disposition != "WRITE_APPEND":
        return True  # WRITE_EMPTY (the default) fails on a re-run; WRITE_TRUNCATE replaces
    if isinstance(value("method"), str) and str(value("method")).upper() in ("REPLACE", "UPSERT"):
        return True
    if value("if_exists") == "replace" or value("recreate") is True or value("upsert") is True:
        return True
    if kind in _TABLE_KINDS and (value("replace") is True or value("preoperator") is not None
                                 or value("upsert_keys") is not None or value("upsert_key") is not None):
        return True
    return False
