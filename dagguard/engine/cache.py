"""The result cache: a file's result is reused while nothing it was computed from has changed.

Where: `.dagguard_cache/` beside the pyproject.toml in use (else in the working folder), or
`--cache-dir` / `DAGGUARD_CACHE_DIR` / `cache-dir`, with ruff's CACHEDIR.TAG and a `.gitignore`
of `*`. One pack file per configuration (the working folder and the settings, which fix the
paths messages show and what is checked), holding every file's entry: a warm run opens one
file, not one per checked file (issue 25: opening 1,160 entries was a third of a warm run).
The pack is read once, and written once at the end of a run that changed something: re-read
first and merged, so a concurrent run's entries are kept unless both write in the same instant
(then one run's new entries are lost and re-checked next time, never damaged); written to a
temp file and renamed over the old one, so a reader sees the old pack or the new one, and a
killed run leaves the old one.

A pack holds what must still hold for its entries to be reused: the format, dagguard's version
and a fingerprint of its installed source, Python's version and the UTC day of `now` (run-count
estimates in messages move with it): a pack written by anything else is ignored whole, and
replaced by the next write. Each entry holds the file's content hash, the content hash of every
project module the result was resolved through (editing a factory re-checks its callers) and
the files whose creation would change the result (a module it imports that did not exist).

Reading every file to hash it is skipped when its stat (size, mtime, ctime, inode) is the one
stored with its hash. ctime cannot be set back by a program (`touch -d`, `git checkout` and
rsync set mtime, any write moves ctime to now), so a changed file never keeps its stat; and a
stat is stored only for files last changed two seconds or more before they were read, so an
edit within the filesystem's timestamp granularity of the read is not mistaken for no edit
(git's "racy clean" rule). Project modules' hashes are kept the same way.

The format is `marshal` of plain tuples and dicts (no class is named, no code runs on load)
behind a magic string and a checksum: a truncated, corrupt, foreign or older-format pack is a
miss, never an error. Only this module knows the format; nothing else knows where a result
came from.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import marshal
import os
import stat
import sys
import time
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, Optional, Sequence

from dagguard import __version__
from dagguard.config import Settings
from dagguard.engine.dag_listing import DagSummary
from dagguard.engine.files import MAX_FILE_BYTES, UnreadableFile, read_source
from dagguard.engine.findings import Finding
from dagguard.engine.results import FileResult
from dagguard.rules.rule import DagSite

DEFAULT_DIR_NAME = ".dagguard_cache"
ENV_VAR = "DAGGUARD_CACHE_DIR"
FORMAT = 2
_MAGIC = b"dagguard-result-cache\n"
_CHECKSUM_BYTES = 16
_PACKS = f"results-v{FORMAT}"
# A file changed this recently before it was read keeps no stat: an edit in the same timestamp
# tick (2 s on FAT, 1 s on some network filesystems) would leave the stat unchanged.
_RACY_NS = 2_000_000_000
_CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                 "# This file is a cache directory tag created by dagguard.\n"
                 "# For information about cache directory tags see https://bford.info/cachedir/\n")

_FINDING_FIELDS = tuple(f.name for f in fields(Finding))
_SUMMARY_FIELDS = tuple(f.name for f in fields(DagSummary))

StatKey = tuple[int, int, int, int]
# An entry: (stat of the file or None, content hash, ((module, hash), ...),
#            (absent file or its highest absent folder, ...), facts)
Entry = tuple[Optional[StatKey], str, tuple[tuple[str, str], ...], tuple[str, ...], tuple[Any, ...]]


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


def stored_paths(directory: Path) -> list[str]:
    """The files that have an entry in the packs under `directory`, sorted (for tests and
    diagnostics; damaged and foreign packs count none)."""
    found: list[str] = []
    for pack in sorted(directory.glob("results-v*/*")):
        if pack.name.startswith(".tmp-"):
            continue
        try:
            payload = _unwrap(pack.read_bytes())
            if payload is not None:
                found.extend(marshal.loads(payload)[1])
        except Exception:  # a damaged or foreign pack holds nothing
            continue
    return sorted(found)


def _stat_key(info: os.stat_result, read_at_ns: int) -> Optional[StatKey]:
    """The stat that vouches for the content read at `read_at_ns`, or None when the file was
    changed too shortly before to tell a later edit in the same tick apart."""
    if read_at_ns - max(info.st_mtime_ns, info.st_ctime_ns) < _RACY_NS:
        return None
    return _full_key(info)


def _present(probe: str) -> bool:
    """Has a file a result depends on being absent (or the folder it would be in) appeared?"""
    return os.path.isdir(probe) if probe.endswith(os.sep) else os.path.isfile(probe)


def _full_key(info: os.stat_result) -> StatKey:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


class ResultCache:
    """The pack of one configuration: read once, looked up before checking, saved after."""

    def __init__(self, directory: Path, settings: Settings, now: dt.datetime) -> None:
        self.directory = directory
        self.packs = directory / _PACKS
        self._cwd = os.getcwd()
        selector = f"{self._cwd}\0{settings_key(settings)}"
        # The shown paths (messages carry them) follow from the paths as given and the working
        # folder; the entries inside are named by the path as given.
        self.pack = self.packs / hashlib.blake2b(selector.encode("utf-8", "surrogateescape"),
                                                 digest_size=16).hexdigest()
        day = now.astimezone(dt.timezone.utc).date().isoformat()
        self._stamp = (FORMAT, __version__, source_fingerprint(), sys.implementation.name,
                       tuple(sys.version_info[:3]), day)
        self._entries: Optional[dict[str, Entry]] = None   # the pack as read, once
        self._modules: dict[str, tuple[StatKey, str]] = {}  # project module -> (stat, hash) as read
        self._new: dict[str, Entry] = {}                     # entries to write
        self._new_modules: dict[str, tuple[StatKey, str]] = {}
        self._stats: dict[str, StatKey] = {}  # a file to check -> its stat, if it vouches for the hash read
        self._digests: dict[str, str] = {}   # project module -> content hash, once per run
        self._folders: dict[str, bool] = {}   # a folder of such files -> is it a directory now
        self._paths: dict[str, Path] = {}     # the modules' paths, made once: files share them
        self._ready = False
        self.problem: Optional[str] = None   # why the pack could not be written, if it could not

    # --- lookups -------------------------------------------------------------------------------

    def lookup_many(self, paths: Sequence[Path]) -> tuple[list[Optional[str]], list[Optional[FileResult]]]:
        """For each path: its content hash (None when it cannot be read: not cached) and its
        stored result if everything it was computed from is unchanged (else None)."""
        try:
            return self._lookup_many(paths, self._load())
        except Exception:  # entries of a shape this code did not write: all misses, rewritten
            self._entries, self._modules, self._new = {}, {}, {}
            return self._lookup_many(paths, {})

    def _lookup_many(self, paths: Sequence[Path],
                     entries: dict[str, Entry]) -> tuple[list[Optional[str]], list[Optional[FileResult]]]:
        digests: list[Optional[str]] = []
        candidates: list[tuple[int, Entry]] = []
        for index, path in enumerate(paths):
            key = str(path)
            entry = entries.get(key)
            digest = self._file_digest(path, key, entry)
            digests.append(digest)
            if entry is not None and digest is not None and entry[1] == digest:
                candidates.append((index, entry))
        results: list[Optional[FileResult]] = [None] * len(digests)
        # Each project module and each absent file is looked at once, however many entries
        # name it; the entries are then tested against what changed with set operations.
        stale = self._stale_modules(set().union(*(entry[2] for _, entry in candidates)))
        created = {name for name in set().union(*(entry[3] for _, entry in candidates)) if _present(name)}
        for index, entry in candidates:
            if stale and not stale.isdisjoint(entry[2]):
                continue
            if created and not created.isdisjoint(entry[3]):
                continue   # a module it imports has been created since: its names may resolve now
            try:
                results[index] = _decode(paths[index], entry[4], self._paths)
            except Exception:  # a foreign or damaged entry: a miss, rewritten after the check
                continue
        return digests, results

    def lookup(self, path: Path, digest: str) -> Optional[FileResult]:
        """The stored result of `path` (whose content hash is `digest`) if its content, its
        modules, dagguard and the day are those it was computed with; else None."""
        try:
            entry = self._load().get(str(path))
            if entry is None or entry[1] != digest:
                return None
            if self._stale_modules(set(entry[2])) or any(_present(name) for name in entry[3]):
                return None
            return _decode(path, entry[4], self._paths)
        except Exception:  # a foreign or damaged entry: a miss, rewritten after the check
            return None

    def _load(self) -> dict[str, Entry]:
        if self._entries is None:
            self._entries, self._modules = self._read_pack()
        return self._entries

    def _read_pack(self) -> tuple[dict[str, Entry], dict[str, tuple[StatKey, str]]]:
        """The pack's entries and module stats, or nothing when it is missing, damaged or another
        dagguard's, Python's or day's."""
        try:
            with open(self.pack, "rb") as file:
                payload = _unwrap(file.read())
            if payload is not None:
                stamp, entries, modules = marshal.loads(payload)
                if stamp == self._stamp and isinstance(entries, dict) and isinstance(modules, dict):
                    return entries, modules
        except Exception:  # missing, unreadable, damaged or foreign: rebuilt by the next save
            pass
        return {}, {}

    def _file_digest(self, path: Path, key: str, entry: Optional[Entry]) -> Optional[str]:
        """The content hash of a file to check; its stored one when its stat is unchanged."""
        read_at = time.time_ns()
        try:
            info = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None   # not read by the check either: reported, not cached
        if entry is not None and entry[0] == _full_key(info):
            return entry[1]
        try:
            digest = content_digest(read_source(path, MAX_FILE_BYTES))
        except UnreadableFile:
            return None
        stat_key = _stat_key(info, read_at)
        if stat_key is not None:
            self._stats[key] = stat_key   # for a result stored for this content
            if entry is not None and entry[1] == digest:
                # Unchanged content under a new stat (touched, or old enough now): keep the stat.
                self._new[key] = (stat_key, *entry[1:])
        return digest

    def _module_digest(self, module: str) -> str:
        known = self._digests.get(module)
        if known is None:
            known = self._digests[module] = self._read_module_digest(module)
        return known

    def _read_module_digest(self, module: str) -> str:
        read_at = time.time_ns()
        try:
            info = os.stat(module)
            stored = self._modules.get(module)
            if stored is not None and stored[0] == _full_key(info):
                return stored[1]
            digest = content_digest(Path(module).read_bytes())
        except OSError:
            return ""    # gone or unreadable: differs from any hash stored
        stat_key = _stat_key(info, read_at)
        if stat_key is not None:
            self._new_modules[module] = (stat_key, digest)
        return digest

    def _stale_modules(self, pairs: set[tuple[str, str]]) -> set[tuple[str, str]]:
        """The (module, hash) pairs whose module no longer has that hash."""
        return {(module, digest) for module, digest in pairs if self._module_digest(module) != digest}

    def _probe(self, module: str) -> str:
        """What has to stay absent for `module` to stay absent: the module, or the highest of its
        folders that does not exist. The files a result depends on being absent are mostly under
        folders that do not exist either (`<root>/pandas/...` for every root): 39,482 absent
        files of 933 entries came down to 1,865 paths to look at (issue 25's corpus). A folder
        created under which the module still is not costs a re-check, never a stale result."""
        folder = os.path.dirname(module)
        if self._folder_exists(folder):
            return module
        while True:
            parent = os.path.dirname(folder)
            if parent in ("", folder) or self._folder_exists(parent):
                return folder + os.sep   # marked as a folder: a file of that name does not count
            folder = parent

    def _folder_exists(self, folder: str) -> bool:
        """Is `folder` a directory? Asked of its parent first: one answer about `<root>/pandas`
        spares a stat of each folder below it."""
        known = self._folders.get(folder)
        if known is None:
            parent = os.path.dirname(folder)
            known = (parent in ("", folder) or self._folder_exists(parent)) and os.path.isdir(folder)
            self._folders[folder] = known
        return known

    # --- stores --------------------------------------------------------------------------------

    def store(self, path: Path, digest: str, result: FileResult, save: bool = True) -> None:
        """Keep `result` for `path` (read with content hash `digest`); a result with an internal
        error is not kept: the next run tries again. With `save`, the pack is written now; else
        by `save()`. A write that fails is remembered, not raised."""
        if result.internal_errors or self.problem is not None:
            return
        depends_on = tuple(sorted((str(module), self._module_digest(str(module))) for module in result.depends_on))
        if any(not module_digest for _, module_digest in depends_on):
            return
        try:
            absent = tuple(sorted({self._probe(str(module)) for module in result.absent_modules}))
            facts = _encode(result)
            marshal.dumps(facts)   # a value marshal cannot hold (a new field's type): not kept
        except ValueError:
            return
        key = str(path)
        stat_key = self._stats.get(key)
        if stat_key is None:
            entry = self._load().get(key)
            stat_key = entry[0] if entry is not None and entry[1] == digest else None
        self._new[key] = (stat_key, digest, depends_on, absent, facts)
        if save:
            self.save()

    def save(self) -> None:
        """Write the pack if this run changed an entry: merged into the pack on disk now (another
        run may have written since this one read it), then replaced atomically."""
        if not (self._new or self._new_modules) or self.problem is not None:
            return
        entries, modules = self._read_pack()
        entries.update(self._new)
        modules.update(self._new_modules)
        used = {module for entry in entries.values() for module, _ in entry[2]}
        modules = {module: known for module, known in modules.items() if module in used}
        try:
            payload = marshal.dumps((self._stamp, entries, modules))
        except ValueError:
            return
        try:
            self._prepare()
            _write_atomically(self.pack, _wrap(payload))
        except OSError as exc:
            self.problem = f"cannot write the cache in {self.directory}: {exc.strerror or exc}; results are not cached"
            return
        self._entries, self._modules = entries, modules
        self._new, self._new_modules = {}, {}

    def _prepare(self) -> None:
        if self._ready:
            return
        # The tag and the `*` .gitignore go only into a folder the cache has to itself: one it
        # creates, or an empty one (`--cache-dir .` must not hide a project from git).
        fresh = not self.directory.exists() or not any(self.directory.iterdir())
        if not fresh and not self.packs.exists():
            _remove_older_formats(self.directory)
        self.packs.mkdir(parents=True, exist_ok=True)
        if fresh:
            for name, text in (("CACHEDIR.TAG", _CACHEDIR_TAG), (".gitignore", "# Created by dagguard.\n*\n")):
                _write_atomically(self.directory / name, text.encode())
        self._ready = True


def _remove_older_formats(directory: Path) -> None:
    """Delete the packs of older cache formats, which this version never reads: done once, when
    this format's folder is first made, so an upgrade does not leave them behind for good."""
    import shutil

    for folder in directory.glob("results-v*"):
        if folder.name != _PACKS and folder.name[len("results-v"):].isdigit() and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)


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
