"""What a Spark write's scope (its partitions of the table) holds on storage: its files, and
what dagguard last wrote there while they were those files.

A Parquet table has no log of its commits, but every write of it (dagguard's, Spark's, Hive's)
creates files of new names and deletes the old ones. So the scope's files (name, size,
modification time) after a dagguard write identify the rows it left there: while they are
exactly those files, the scope still holds those rows, and its fingerprint is the one recorded
beside them. A rerun then compares its batch with that fingerprint instead of reading the
scope's rows (a Spark job of 0.3-1.0 s per million rows). Any other file there, or one missing,
or a different column list: the record is not used and the rows are read as before.

The record is a small JSON file `_dagguard/scope-<digest of the scope>.json` in the table's
folder, beside the lock, written while holding the lock, after the data (and before the ledger
row): a writer stopped before it leaves the previous record, which names other files and so is
not used. With Spark Connect (no JVM on the client) nothing is listed or recorded.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from dagguard.idempotent.engines.spark_lock import FOLDER, can_lock, open_store

Files = dict[str, tuple[int, int]]


def list_files(spark: Any, scope: Any) -> Files | None:
    """{file URI: (size, modification time)} of the files Spark would read for `scope` (a
    table's rows filtered on its partition columns, so only the scope's partitions are
    listed); {} for none, None where this session cannot tell (Spark Connect)."""
    plan = getattr(scope, "_jdf", None)
    if plan is None or not can_lock(spark):
        return None
    names = list(plan.inputFiles())
    if not names:
        return {}
    if all(name.startswith("file:") for name in names):
        import os
        from urllib.parse import unquote, urlparse

        found = {}
        for name in names:
            # inputFiles gives URIs (a folder `ts=... 05%3A00` as `ts=...%2005%253A00`).
            status = os.stat(unquote(urlparse(name).path))
            found[name] = (status.st_size, status.st_mtime_ns)
        return found
    return hadoop_statuses(spark, names)


def hadoop_statuses(spark: Any, names: list[str]) -> Files:
    """{file URI: (size, modification time)} through Hadoop's FileSystem (HDFS, S3A...)."""
    jvm = spark._jvm
    fs_path = jvm.org.apache.hadoop.fs.Path
    configuration = spark._jsc.hadoopConfiguration()
    found = {}
    for name in names:
        path = fs_path(jvm.java.net.URI(name))
        status = path.getFileSystem(configuration).getFileStatus(path)
        found[name] = (int(status.getLen()), int(status.getModificationTime()))
    return found


def untouched_folders(before: Files, after: Files) -> list[str]:
    """The partition folders of `before` whose files are all still there, none added: the
    folders a dynamic partition overwrite between the two listings did not write."""
    def by_folder(files: Files) -> dict[str, set[str]]:
        folders: dict[str, set[str]] = {}
        for name in files:
            folder, _, file = name.rpartition("/")
            folders.setdefault(folder, set()).add(file)
        return folders

    old, new = by_folder(before), by_folder(after)
    return sorted(folder for folder, files in old.items() if new.get(folder) == files)


class ScopeRecord:
    """The record of one scope of the table stored at `location` (see the module)."""

    def __init__(self, spark: Any, location: str, scope: tuple[Any, ...]) -> None:
        self.spark, self.location = spark, location
        digest = hashlib.sha256(json.dumps([str(part) for part in scope]).encode()).hexdigest()[:32]
        self.name = f"scope-{digest}.json"

    def _store(self) -> Any:
        return open_store(self.spark, self.location.rstrip("/") + "/" + FOLDER)

    def fingerprint(self, files: Files, columns: dict[str, str]) -> tuple[int, int, int] | None:
        """The fingerprint recorded for exactly these files and table columns, else None."""
        try:
            found = json.loads(self._store().read(self.name) or "null")
            if (found["columns"] == columns and found["files"] == {name: list(value) for name, value in files.items()}):
                count, wide, narrow = found["fingerprint"]
                return int(count), int(wide), int(narrow)
        except (TypeError, KeyError, ValueError):
            pass  # none yet, or a record this code cannot read: the rows are read instead
        return None

    def record(self, files: Files, columns: dict[str, str], fingerprint: tuple[int, int, int]) -> None:
        """The scope now holds exactly `files`, whose rows over `columns` have `fingerprint`."""
        text = json.dumps({"columns": columns, "files": {name: list(value) for name, value in files.items()},
                           "fingerprint": [str(value) for value in fingerprint]}, sort_keys=True)
        self._store().write(self.name, text)
