"""The result cache: a file's result is reused while nothing it was computed from has changed.

Where: `.dagguard_cache/` beside the pyproject.toml in use (else in the working folder), or
`--cache-dir` / `DAGGUARD_CACHE_DIR` / `cache-dir`, with ruff's CACHEDIR.TAG and a `.gitignore`
of `*`. One small file per entry: a pre-commit run over three files reads and writes three
entries, not the whole project's; concurrent runs replace whole entries atomically (temp file,
then `os.replace`) and never lose each other's; a bad entry costs one re-check, not all.

An entry is named by what selects it: the file as given, the working folder (with the path,
what messages show) and the settings; so each file has one entry per configuration, and an
edit overwrites it. It holds what must still hold for the result to be reused: the format,
dagguard's version and a fingerprint of its installed source, Python's version, the UTC day of
`now` (run-count estimates in messages move with it), the file's content hash and the content
hash of every project module the result was resolved through (editing a factory re-checks its
callers).

The format is `marshal` of plain tuples (no class is named, no code runs on load) behind a
magic string and a checksum: a truncated, corrupt or foreign file is a miss, never an error.
Only this module knows the format; nothing else knows where a result came from.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import marshal
import os
import sys
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, Optional

from dagguard import __version__
from dagguard.config import Settings
from dagguard.engine.dag_listing import DagSummary
from dagguard.engine.files import MAX_FILE_BYTES, UnreadableFile, read_source
from dagguard.engine.findings import Finding
from dagguard.engine.results import FileResult
from dagguard.rules.rule import DagSite

DEFAULT_DIR_NAME = ".dagguard_cache"
ENV_VAR = "DAGGUARD_CACHE_DIR"
FORMAT = 1
_MAGIC = b"dagguard-result-cache\n"
_CHECKSUM_BYTES = 16
_ENTRIES = f"results-v{FORMAT}"
_CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                 "# This file is a cache directory tag created by dagguard.\n"
                 "# For information about cache directory tags see https://bford.info/cachedir/\n")

_FINDING_FIELDS = tuple(f.name for f in fields(Finding))
_SUMMARY_FIELDS = tuple(f.name for f in fields(DagSummary))


def cache_directory(option: Optional[Path], settings: Settings) -> Path:
    """Where the cache lives: `--cache-dir` (or DAGGUARD_CACHE_DIR, which the CLI reads into
    it), else the config's `cache-dir`, else `.dagguard_cache` beside the config file (or in
    the working folder)."""
    if option is not None:
        return option
    if settings.cache_dir is not None:
        return settings.root / settings.cache_dir
    return settings.root / DEFAULT_DIR_NAME


def content_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def source_fingerprint() -> str:
    """A cheap fingerprint of the installed dagguard's source: sizes and mtimes of its .py files,
    so that a developer's edit to a rule is not answered with results of the old code."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.blake2b(digest_size=16)
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(s for s in subfolders if s != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                info = os.stat(os.path.join(folder, name))
                digest.update(f"{os.path.relpath(os.path.join(folder, name), root)}:{info.st_size}:"
                              f"{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def settings_key(settings: Settings) -> str:
    """A stable text of everything in the settings that can change a file's result."""
    # The cache's own location does not change results; everything else may (the repr holds
    # config_path too: the root that per-file-ignores match against).
    return repr(replace(settings, cache_dir=None))


class ResultCache:
    """The entries of one run: looked up before checking, stored after."""

    def __init__(self, directory: Path, settings: Settings, now: dt.datetime) -> None:
        self.directory = directory
        self.entries = directory / _ENTRIES
        self._entries_text = str(self.entries)
        self._settings = settings_key(settings)
        day = now.astimezone(dt.timezone.utc).date().isoformat()
        self._stamp = (FORMAT, __version__, source_fingerprint(), sys.implementation.name,
                       tuple(sys.version_info[:3]), day)
        self._cwd = os.getcwd()
        self._digests: dict[str, str] = {}   # project module -> content hash, once per run
        self._present: dict[str, bool] = {}   # a file a result depends on being absent -> is it there now
        self._folders: dict[str, bool] = {}   # a folder of such files -> is it a directory now
        self._paths: dict[str, Path] = {}     # the modules' paths, made once: files share them
        self._ready = False
        self.problem: Optional[str] = None   # why entries could not be written, if they could not

    # --- lookups -------------------------------------------------------------------------------

    def read(self, path: Path) -> Optional[str]:
        """The content hash of the file to check, or None when it cannot be read (not cached)."""
        try:
            return content_digest(read_source(path, MAX_FILE_BYTES))
        except UnreadableFile:
            return None

    def lookup(self, path: Path, digest: str) -> Optional[FileResult]:
        """The stored result of `path` if its content, its modules, dagguard and the day are
        those it was computed with; else None."""
        try:
            with open(os.path.join(self._entries_text, self._name(path)), "rb") as file:
                data = file.read()
        except OSError:
            return None
        try:
            payload = _unwrap(data)
            if payload is None:
                return None
            stamp, stored_digest, depends_on, absent, facts = marshal.loads(payload)
            if stamp != self._stamp or stored_digest != digest:
                return None
            if any(self._module_digest(module) != module_digest for module, module_digest in depends_on):
                return None
            if any(self._exists(module) for module in absent):
                return None   # a module it imports has been created since: its names may resolve now
            return _decode(path, facts, self._paths)
        except Exception:  # a foreign or damaged entry: a miss, rewritten after the check
            return None

    def _module_digest(self, module: str) -> str:
        known = self._digests.get(module)
        if known is None:
            try:
                known = content_digest(Path(module).read_bytes())
            except OSError:
                known = ""    # gone or unreadable: differs from any hash stored
            self._digests[module] = known
        return known

    def _exists(self, module: str) -> bool:
        known = self._present.get(module)
        if known is None:
            folder = os.path.dirname(module)
            known = self._present[module] = self._folder_exists(folder) and os.path.isfile(module)
        return known

    def _folder_exists(self, folder: str) -> bool:
        """Is `folder` a directory? Asked of its parent first: the files a result depends on being
        absent are mostly under folders that do not exist either (`<root>/pandas/...` for every
        root), and one answer about `<root>/pandas` spares a stat of each file below it."""
        known = self._folders.get(folder)
        if known is None:
            parent = os.path.dirname(folder)
            known = (parent in ("", folder) or self._folder_exists(parent)) and os.path.isdir(folder)
            self._folders[folder] = known
        return known

    def _name(self, path: Path) -> str:
        # The shown path (messages carry it) follows from the path as given and the working
        # folder; display_path itself resolves symlinks, which costs more than the lookup.
        selector = f"{self._cwd}\0{path}\0{self._settings}"
        return hashlib.blake2b(selector.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()

    # --- stores --------------------------------------------------------------------------------

    def store(self, path: Path, digest: str, result: FileResult) -> None:
        """Keep `result` for `path` (read with content hash `digest`); a result with an internal
        error is not kept: the next run tries again. A write that fails is remembered, not raised."""
        if result.internal_errors or self.problem is not None:
            return
        depends_on = tuple(sorted((str(module), self._module_digest(str(module))) for module in result.depends_on))
        if any(not module_digest for _, module_digest in depends_on):
            return
        try:
            absent = tuple(sorted(str(module) for module in result.absent_modules))
            payload = marshal.dumps((self._stamp, digest, depends_on, absent, _encode(result)))
        except ValueError:  # a value marshal cannot hold (a new field's type): not kept, not an error
            return
        try:
            self._prepare()
            _write_atomically(self.entries / self._name(path), _wrap(payload))
        except OSError as exc:
            self.problem = f"cannot write the cache in {self.directory}: {exc.strerror or exc}; results are not cached"

    def _prepare(self) -> None:
        if self._ready:
            return
        # The tag and the `*` .gitignore go only into a folder the cache has to itself: one it
        # creates, or an empty one (`--cache-dir .` must not hide a project from git).
        fresh = not self.directory.exists() or not any(self.directory.iterdir())
        self.entries.mkdir(parents=True, exist_ok=True)
        if fresh:
            for name, text in (("CACHEDIR.TAG", _CACHEDIR_TAG), (".gitignore", "# Created by dagguard.\n*\n")):
                _write_atomically(self.directory / name, text.encode())
        self._ready = True


def _wrap(payload: bytes) -> bytes:
    return _MAGIC + hashlib.blake2b(payload, digest_size=_CHECKSUM_BYTES).digest() + payload


def _unwrap(data: bytes) -> Optional[bytes]:
    """The payload, if the bytes are an intact entry of this format."""
    if not data.startswith(_MAGIC):
        return None
    checksum = data[len(_MAGIC):len(_MAGIC) + _CHECKSUM_BYTES]
    payload = data[len(_MAGIC) + _CHECKSUM_BYTES:]
    if hashlib.blake2b(payload, digest_size=_CHECKSUM_BYTES).digest() != checksum:
        return None
    return payload


def _write_atomically(target: Path, data: bytes) -> None:
    import tempfile   # writes only: a warm run reads

    # A temp file in the same folder, then a rename: a reader sees the old entry or the new one.
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _encode(result: FileResult) -> tuple[Any, ...]:
    """The result as plain tuples; the path is not stored (the run that reads it knows it)."""
    return (
        tuple(tuple(getattr(f, name) for name in _FINDING_FIELDS) for f in result.findings),
        tuple((s.dag_id, s.line, s.column, s.end_line, s.end_column, s.branches) for s in result.dag_sites),
        result.dag_count,
        frozenset(result.flagged_dags),
        dict(result.noqa),
        result.imports_airflow,
        tuple(tuple(getattr(d, name) for name in _SUMMARY_FIELDS) for d in result.dags),
        tuple(str(module) for module in result.depends_on),
        tuple(result.warnings),
        result.unseen_reason,
        tuple(sorted(result.imports)),
    )


def _decode(path: Path, facts: tuple[Any, ...], paths: dict[str, Path]) -> FileResult:
    findings, sites, dag_count, flagged, noqa, imports_airflow, dags, depends_on, warnings, reason, imports = facts
    return FileResult(
        path=path,
        findings=tuple(Finding(*values) for values in findings),
        dag_sites=tuple(DagSite(dag_id, path, line, column, end_line, end_column, branches)
                        for dag_id, line, column, end_line, end_column, branches in sites),
        dag_count=dag_count,
        flagged_dags=frozenset(flagged),
        noqa=noqa,
        imports_airflow=imports_airflow,
        dags=tuple(DagSummary(*values) for values in dags),
        depends_on=frozenset(paths.get(module) or paths.setdefault(module, Path(module)) for module in depends_on),
        warnings=tuple(warnings),
        unseen_reason=reason,
        imports=frozenset(imports),
    )
