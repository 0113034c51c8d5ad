"""A lock of one Spark table shared by every Spark application that writes it: a file
`_dagguard/lock` in the table's own storage folder, created only if absent, so that two writers
(two processes, two applications, two clusters over the same storage) take turns. Parquet tables
have no commit that two writers could conflict on; this lock is what detects the other writer.

- Taking it: create `lock` if absent (HDFS, the local file system: atomic; other Hadoop file
  systems through `FileSystem.create(path, overwrite=False)`, atomic only where the store
  makes it so: S3A checks, then PUTs, two steps). The lock records its holder (a random
  token, host, pid, Spark application, its lease).
- Holding it: a thread of the holder rewrites its heartbeat file `beat-<token>` every quarter
  lease. Before its commit the holder checks that the lock is still its own
  (ConcurrentWriteError otherwise).
- Waiting: a writer that finds the lock taken polls it; when neither the lock nor its holder's
  heartbeat has changed for the holder's lease, as measured by the waiter's own clock (no two
  machines' clocks are compared), the holder is taken for dead (a writer killed with -9, a lost
  driver) and its lock is broken: only the writer that creates `break-<digest of that lock>`
  (create-if-absent again) deletes it, then every waiter tries to create the lock anew. After
  `spark.dagguard.lockWaitSeconds` of waiting: ConcurrentWriteError.

Settings (Spark conf, e.g. `--conf` of spark-submit or `spark.conf.set`):
`spark.dagguard.lockLeaseSeconds` (60) and `spark.dagguard.lockWaitSeconds` (3600).

The files live under `_dagguard/`, a folder Spark's readers skip (a name starting with `_`).
With Spark Connect the client cannot reach the table's storage: no lock is taken there.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from typing import Any, Iterator

from dagguard.idempotent.errors import ConcurrentWriteError

LEASE_KEY = "spark.dagguard.lockLeaseSeconds"
WAIT_KEY = "spark.dagguard.lockWaitSeconds"
DEFAULT_LEASE = 60.0
DEFAULT_WAIT = 3600.0
FOLDER = "_dagguard"
LOCK = "lock"


class HeldLock:
    """The lock a writer holds: `check()` before its commit."""

    def __init__(self, store: Any, token: str, what: str) -> None:
        self.store, self.token, self.what = store, token, what
        self.lost = False

    def is_mine(self) -> bool:
        return _holder(self.store.read(LOCK))[0] == self.token

    def check(self) -> None:
        """Raise ConcurrentWriteError when another writer took the lock (this one stalled
        longer than its lease, and was taken for dead)."""
        if self.lost or not self.is_mine():
            self.lost = True
            raise ConcurrentWriteError(
                f"the lock of {self.what} passed to another writer while this one held it (it did not renew its "
                f"lease in time: raise {LEASE_KEY}); this write stopped before replacing any partition")


def settings(spark: Any) -> tuple[float, float]:
    """(lease, wait) in seconds, from the session's conf."""
    def number(key: str, default: float) -> float:
        value = spark.conf.get(key, None)
        return default if value in (None, "") else float(value)

    return number(LEASE_KEY, DEFAULT_LEASE), number(WAIT_KEY, DEFAULT_WAIT)


def can_lock(spark: Any) -> bool:
    """False for a Spark Connect session, whose client has no JVM and no storage access."""
    return getattr(spark, "_jvm", None) is not None and getattr(spark, "_jsc", None) is not None


@contextmanager
def storage_lock(spark: Any, location: str, what: str) -> Iterator[HeldLock | None]:
    """Hold the lock of the folder `location` (a URI) while the block runs; `what` names it in
    messages. Yields None (no lock) on Spark Connect."""
    if not can_lock(spark):
        yield None
        return
    lease, wait = settings(spark)
    store = open_store(spark, location.rstrip("/") + "/" + FOLDER)
    token = uuid.uuid4().hex
    record = json.dumps({"token": token, "lease_seconds": lease, "host": socket.gethostname(), "pid": os.getpid(),
                         "application": _application(spark), "taken_at": time.time()})
    beat = f"beat-{token}"
    store.write(beat, "0")  # before the lock: a waiter never sees the lock without its heartbeat
    try:
        _acquire(store, record, what, wait)
        held = HeldLock(store, token, what)
        stop = threading.Event()
        renewer = threading.Thread(target=_renew, args=(store, held, beat, lease, stop), daemon=True,
                                   name=f"dagguard-lock-{token[:8]}")
        renewer.start()
        try:
            yield held
        finally:
            stop.set()
            renewer.join()
            if held.is_mine():
                store.delete(LOCK)
    finally:
        store.delete(beat)


def _acquire(store: Any, record: str, what: str, wait: float) -> None:
    deadline = time.monotonic() + wait
    seen: tuple[str | None, str | None] | None = None
    since = time.monotonic()
    while not store.create(LOCK, record):
        current = store.read(LOCK)
        if current is None:
            continue  # released between our create and our read: try again at once
        holder, lease = _holder(current)
        state = (current, store.read(f"beat-{holder}"))
        now = time.monotonic()
        if state != seen:
            seen, since = state, now
        elif now - since > lease:
            # Unchanged for a whole lease: its holder is dead. One waiter breaks it.
            if _break(store, current, holder, stuck=now - since > 3 * lease):
                seen = None
                continue
        if now > deadline:
            raise ConcurrentWriteError(
                f"{what} is locked by another writer ({_describe(current)}) and stayed locked for {wait:.0f} s "
                f"({WAIT_KEY}); nothing was written. If that writer is gone, its lock expires after its lease; "
                f"its file is {store.where(LOCK)}")
        time.sleep(min(max(lease / 10, 0.2), 2.0))


def _break(store: Any, current: str, holder: str, stuck: bool) -> bool:
    """Delete the dead holder's lock if this waiter is the one that breaks it. `stuck`: the
    break file of this lock has stayed a long time too (its breaker died in between)."""
    name = "break-" + hashlib.sha256(current.encode()).hexdigest()[:32]
    if not store.create(name, current):
        if stuck:
            store.delete(name)
        return False
    try:
        if store.read(LOCK) == current:
            store.delete(LOCK)
            store.delete(f"beat-{holder}")
    finally:
        store.delete(name)
    return True


def _renew(store: Any, held: HeldLock, beat: str, lease: float, stop: threading.Event) -> None:
    count = 0
    while not stop.wait(lease / 4):
        count += 1
        try:
            if not held.is_mine():
                held.lost = True
                return
            store.write(beat, str(count))
        except Exception:  # the storage failed: the next check() or a waiter's break tells
            continue


def _holder(text: str | None) -> tuple[str, float]:
    """(token, lease) of a lock file's text; a file being written (empty) has neither."""
    try:
        found = json.loads(text or "")
        return str(found["token"]), float(found["lease_seconds"])
    except (ValueError, KeyError, TypeError):
        return "", DEFAULT_LEASE


def _describe(text: str) -> str:
    try:
        found = json.loads(text)
        return f"host {found['host']}, pid {found['pid']}, application {found['application']}"
    except (ValueError, KeyError, TypeError):
        return "a lock being written"


def _application(spark: Any) -> str:
    try:
        return str(spark.sparkContext.applicationId)
    except Exception:
        return "?"


def open_store(spark: Any, folder: str) -> Any:
    """The folder's files: through Python on the driver for `file:` paths (Hadoop's local file
    system checks and creates in two steps), through Hadoop's FileSystem API otherwise."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(folder)
    if parsed.scheme in ("", "file"):
        return LocalStore(unquote(parsed.path))
    return HadoopStore(spark, folder)


class LocalStore:
    """A folder of the driver's file system (local mode, or a mount every node shares)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        os.makedirs(folder, exist_ok=True)

    def where(self, name: str) -> str:
        return os.path.join(self.folder, name)

    def create(self, name: str, text: str) -> bool:
        try:
            handle = os.open(self.where(name), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(handle, "w") as file:
            file.write(text)
        return True

    def write(self, name: str, text: str) -> None:
        temporary = self.where(f".{name}.{uuid.uuid4().hex}")
        with open(temporary, "w") as file:
            file.write(text)
        os.replace(temporary, self.where(name))

    def publish(self, name: str, data: bytes) -> None:
        """Write the file `name` whole: under a hidden name first, then renamed."""
        temporary = self.where(f".{name}.{uuid.uuid4().hex}")
        with open(temporary, "wb") as file:
            file.write(data)
        os.replace(temporary, self.where(name))

    def read(self, name: str) -> str | None:
        try:
            with open(self.where(name)) as file:
                return file.read()
        except FileNotFoundError:
            return None

    def delete(self, name: str) -> None:
        try:
            os.unlink(self.where(name))
        except FileNotFoundError:
            pass


class HadoopStore:
    """A folder of any Hadoop file system (HDFS, S3A, ABFS, GCS...) through the session's JVM."""

    def __init__(self, spark: Any, folder: str) -> None:
        self.jvm = spark._jvm
        self.folder = folder
        self.fs = self.jvm.org.apache.hadoop.fs.Path(folder).getFileSystem(spark._jsc.hadoopConfiguration())
        self.fs.mkdirs(self.jvm.org.apache.hadoop.fs.Path(folder))

    def where(self, name: str) -> str:
        return f"{self.folder}/{name}"

    def _path(self, name: str) -> Any:
        return self.jvm.org.apache.hadoop.fs.Path(self.where(name))

    def create(self, name: str, text: str) -> bool:
        from py4j.protocol import Py4JJavaError

        try:
            stream = self.fs.create(self._path(name), False)
        except Py4JJavaError as exc:
            if "FileAlreadyExists" in str(exc.java_exception) or self.fs.exists(self._path(name)):
                return False
            raise
        try:
            stream.writeBytes(text)  # ASCII: json.dumps escapes the rest
        finally:
            stream.close()
        return True

    def write(self, name: str, text: str) -> None:
        stream = self.fs.create(self._path(name), True)
        try:
            stream.writeBytes(text)
        finally:
            stream.close()

    def publish(self, name: str, data: bytes) -> None:
        """Write the file `name` whole: under a hidden name first, then renamed."""
        temporary = self._path(f".{name}.{uuid.uuid4().hex}")
        stream = self.fs.create(temporary, False)
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()
        if not self.fs.rename(temporary, self._path(name)):
            raise OSError(f"cannot rename {temporary} to {self.where(name)}")

    def read(self, name: str) -> str | None:
        from py4j.protocol import Py4JJavaError

        try:
            stream = self.fs.open(self._path(name))
        except Py4JJavaError as exc:
            if "FileNotFound" in str(exc.java_exception):
                return None
            raise
        try:
            return str(self.jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
        finally:
            stream.close()

    def delete(self, name: str) -> None:
        self.fs.delete(self._path(name), False)
