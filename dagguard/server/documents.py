"""The server's state: open documents, their settings, their last results, and the project's
other files for DG302. Every check goes through the linter's API (api.check_buffer,
api.fix_stdin, fixes.fix_one, the result cache, run.combine), so a buffer gets exactly what
`dagguard check - --stdin-filename PATH` gives for the same text.

The methods that check block (libcst on the linter's large-stack thread): the app calls them
from a worker thread, never from its event loop.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from dagguard import api
from dagguard.config import ConfigError, Settings
from dagguard.engine.findings import Finding
from dagguard.engine.results import FileResult, display_path

# A project scanned for DG302 stops after this many files: the scan is background work, and a
# folder opened by mistake (a home directory) must not keep the server busy for minutes.
MAX_SCANNED_FILES = 5000
CONFIG_FILE_NAMES = ("pyproject.toml",)


@dataclass
class Document:
    uri: str
    path: Optional[Path]             # None: an untitled buffer, checked as standard input
    text: str
    version: Optional[int]
    result: Optional[FileResult] = None      # the last check of `checked_text`
    checked_text: Optional[str] = None
    findings: tuple[Finding, ...] = ()       # what was last published, cross-file findings included
    published: bool = False


@dataclass(frozen=True)
class Options:
    """What the client may set (initializationOptions, or didChangeConfiguration's
    `settings.dagguard`): `config` as `--config` takes it (a file, or KEY = VALUE pairs),
    `now` as `--now`, `debounce-ms` between a change and its check."""

    config_file: Optional[Path] = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    now: Optional[dt.datetime] = None
    debounce_seconds: float = 0.05

    @staticmethod
    def parse(raw: Any) -> "Options":
        """Options from the client's JSON; raises ConfigError naming a bad value."""
        if not isinstance(raw, dict):
            return Options()
        raw = raw["dagguard"] if isinstance(raw.get("dagguard"), dict) else raw
        config = raw.get("config") or []
        if isinstance(config, str):
            config = [config]
        if not isinstance(config, list) or not all(isinstance(c, str) for c in config):
            raise ConfigError("the client's dagguard.config must be a string or a list of strings")
        config_file, overrides = api.split_config_options(config)
        now = None
        if raw.get("now") is not None:
            from dagguard.config import parse_now

            now = parse_now(str(raw["now"]))
        debounce = raw.get("debounce-ms", raw.get("debounceMs", 50))
        if not isinstance(debounce, (int, float)) or isinstance(debounce, bool) or not 0 <= debounce <= 10_000:
            raise ConfigError(f"the client's dagguard.debounce-ms must be 0 to 10000, got {debounce!r}")
        return Options(config_file, overrides, now, debounce / 1000)


class ServerState:
    def __init__(self, options: Optional[Options] = None, roots: Sequence[Path] = ()) -> None:
        self.options = options or Options()
        self.roots = tuple(roots)                 # the client's workspace folders
        self.documents: dict[str, Document] = {}
        self._settings: dict[Optional[Path], Settings] = {}
        # The project's files on disk, checked once (from the cache when it holds them) for
        # the DAG sites DG302 compares; by resolved path.
        self.disk_results: dict[Path, FileResult] = {}
        self.scanned_roots: set[Path] = set()
        self._trees: dict[str, tuple[Any, Any]] = {}   # uri -> (which text, its libcst tree)
        self._scan_indexes: dict[Path, Any] = {}        # root -> the ProjectIndex its scan shares
        self.lock = threading.RLock()

    # --- settings --------------------------------------------------------------------------

    def now(self) -> dt.datetime:
        return self.options.now or dt.datetime.now(dt.timezone.utc)

    def settings_for(self, path: Optional[Path]) -> Settings:
        """The settings `dagguard check - --stdin-filename PATH` would use (raises ConfigError)."""
        folder = path.parent if path is not None else None
        with self.lock:
            known = self._settings.get(folder)
        if known is None:
            from dagguard.config import command_line_selection

            # Built as `check` builds them (an empty command-line selection on top), so that
            # the cache's entries, keyed on the settings, are the ones `check` reads.
            known = api.discover_settings([path] if path is not None else [], self.options.config_file,
                                          self.options.overrides).with_selection(
                                              command_line_selection(None, None, None, None))
            with self.lock:
                self._settings[folder] = known
        return known

    def reload(self, options: Optional[Options] = None) -> None:
        """Forget the settings (a config file changed, or the client's options did)."""
        with self.lock:
            if options is not None:
                self.options = options
            self._settings.clear()
            self.disk_results.clear()
            self.scanned_roots.clear()
            self._scan_indexes.clear()

    # --- documents -------------------------------------------------------------------------

    def open(self, uri: str, path: Optional[Path], text: str, version: Optional[int]) -> Document:
        with self.lock:
            document = self.documents[uri] = Document(uri, path, text, version)
        return document

    def close(self, uri: str) -> None:
        with self.lock:
            self.documents.pop(uri, None)
            self._trees.pop(uri, None)

    def _dirty_buffers(self, besides: Document) -> list[Document]:
        """Open documents whose text is not what is on disk: the project index must read them."""
        dirty = []
        for document in list(self.documents.values()):
            if document is besides or document.path is None:
                continue
            try:
                on_disk = document.path.read_bytes()
            except OSError:
                on_disk = None
            if on_disk != document.text.encode("utf-8"):
                dirty.append(document)
        return dirty

    def _project(self, document: Document, settings: Settings, dirty: Iterable[Document]):
        """The index `check` would use, reading the other open buffers instead of their files."""
        from dagguard.model.project.project import ProjectIndex, project_roots

        index = ProjectIndex(project_roots([document.path] if document.path is not None else [],
                                           settings.config_path, settings.src))
        for other in dirty:
            tree = self._tree(other)
            if tree is not None:
                index.remember(other.path, tree)
        return index

    def _tree(self, document: Document):
        """libcst's tree of an open buffer for the project index, with the bounds the index
        applies to a file (size) and the checker to any text (CPython's precheck of nesting
        first, then the large-stack thread); None for a buffer that does not parse."""
        from dagguard.engine.deep_stack import run_deep
        from dagguard.engine.precheck import cpython_check
        from dagguard.model.basics.parsing import parse_module
        from dagguard.model.project.project import MAX_MODULE_BYTES

        data = document.text.encode("utf-8")
        key = (document.version, len(data), hash(data))
        with self.lock:
            known = self._trees.get(document.uri)
        if known is not None and known[0] == key:
            return known[1]
        tree = None
        if len(data) <= MAX_MODULE_BYTES and cpython_check(data).error is None:
            try:
                tree = run_deep(parse_module, data)
            except Exception:   # a buffer that does not parse: its names stay unknown, as on disk
                tree = None
        with self.lock:
            self._trees[document.uri] = (key, tree)
        return tree

    def check(self, document: Document, text: str) -> Optional[FileResult]:
        """Check `text` as `document`'s contents (blocking). None when the config excludes it."""
        settings = self.settings_for(document.path)
        data = text.encode("utf-8")
        dirty = self._dirty_buffers(document)
        cache = self._cache(settings) if not dirty and document.path is not None else None
        digest = None
        if cache is not None:
            from dagguard.engine.cache import content_digest

            digest = content_digest(data)
            hit = cache.lookup(document.path, digest)
            if hit is not None and not api.stdin_excluded(document.path, settings):
                return hit
        result = api.check_buffer(data, document.path, settings=settings, now=self.now(),
                                  project=self._project(document, settings, dirty))
        if cache is not None and digest is not None and result is not None:
            cache.store(document.path, digest, result)
        return result

    def _cache(self, settings: Settings, shared: Optional[dict[str, Any]] = None):
        """The result cache `dagguard check` uses for these settings, unless turned off. With
        `shared` (a scan's), one per settings for all the scan's files: the cache reads its pack
        once and writes it once (save_caches), where a cache per file would read and write the
        whole pack for every file."""
        if os.environ.get("DAGGUARD_NO_CACHE"):
            return None
        from dagguard.engine.cache import ResultCache, cache_directory, settings_key

        key = settings_key(settings) if shared is not None else ""
        if shared is not None and key in shared:
            return shared[key]
        directory = cache_directory(Path(os.environ["DAGGUARD_CACHE_DIR"]) if os.environ.get("DAGGUARD_CACHE_DIR")
                                    else None, settings)
        cache = ResultCache(directory, settings, self.now())
        if shared is not None:
            shared[key] = cache
        return cache

    @staticmethod
    def save_caches(shared: dict[str, Any]) -> None:
        """Write the packs of a scan's caches (see _cache)."""
        for cache in shared.values():
            cache.save()

    def record(self, document: Document, text: str, result: Optional[FileResult]) -> None:
        with self.lock:
            document.result = result
            document.checked_text = text

    def findings(self, document: Document) -> tuple[Finding, ...]:
        """The document's findings with the cross-file rules (DG302) run over the open
        documents and the project's other files on disk, as `check` of the project would."""
        result = document.result
        if result is None:
            return ()
        settings = self.settings_for(document.path)
        others: dict[Path, FileResult] = {}
        with self.lock:
            for path, disk in self.disk_results.items():
                others[path] = disk
            for other in self.documents.values():
                if other is not document and other.result is not None and other.path is not None:
                    others[_resolved(other.path)] = other.result
        if document.path is not None:
            others.pop(_resolved(document.path), None)
        # Only their DAG sites and noqa comments matter: their own findings are theirs.
        stripped = [replace(r, findings=(), internal_errors=(), warnings=()) for r in others.values()]
        from dagguard.engine import run

        combined = run.combine([result] + stripped, settings)
        shown = display_path(document.path) if document.path is not None else api.STDIN
        return tuple(f for f in combined.findings if f.path == shown)

    def dependents(self, changed: Path) -> list[Document]:
        """Open documents whose last result was resolved through the module at `changed`."""
        target = _resolved(changed)
        with self.lock:
            return [d for d in self.documents.values()
                    if d.result is not None and d.path is not None and _resolved(d.path) != target
                    and any(_resolved(Path(m)) == target for m in d.result.depends_on)]

    # --- the project on disk (DG302) -------------------------------------------------------

    def scan_root(self, document: Document) -> Optional[Path]:
        """The folder whose files DG302 compares this document with, when not scanned yet."""
        if document.path is None:
            return None
        try:
            settings = self.settings_for(document.path)
        except ConfigError:
            return None
        root = settings.config_path.parent if settings.config_path is not None else next(
            (r for r in self.roots if r in document.path.parents), None)
        if root is None:
            return None
        with self.lock:
            if root in self.scanned_roots:
                return None
            self.scanned_roots.add(root)
        return root

    def files_to_scan(self, root: Path) -> list[Path]:
        """The files `check ROOT` would check (at most MAX_SCANNED_FILES); their scan shares
        one project index, as `check`'s files do."""
        from dagguard.model.project.project import ProjectIndex, project_roots

        settings = self.settings_for(root / "__init__.py")
        files = api.files_to_check([root], settings)[:MAX_SCANNED_FILES]
        with self.lock:
            self._scan_indexes[root] = ProjectIndex(project_roots([root], settings.config_path, settings.src, files))
        return files

    def scan_file(self, path: Path, root: Path, caches: Optional[dict[str, Any]] = None) -> None:
        """Check one file on disk for its DAG sites (the cache answers when it can). `caches`:
        the scan's, shared by its files and saved by save_caches at its end."""
        from dagguard.engine.cache import content_digest
        from dagguard.engine.files import MAX_FILE_BYTES, UnreadableFile, read_source

        settings = self.settings_for(path)
        try:
            data = read_source(path, MAX_FILE_BYTES)
        except UnreadableFile:
            return
        cache = self._cache(settings, caches)
        digest = content_digest(data)
        result = cache.lookup(path, digest) if cache is not None else None
        if result is None:
            with self.lock:
                index = self._scan_indexes.get(root)
            result = api.check_buffer(data, path, settings=settings, now=self.now(), project=index)
            if result is None:
                return
            if cache is not None:
                cache.store(path, digest, result, save=caches is None)
        with self.lock:
            self.disk_results[_resolved(path)] = result

    def forget_disk_file(self, path: Path) -> Optional[Path]:
        """Drop what is known of a file that changed on disk; the scanned root holding it, if any."""
        with self.lock:
            self.disk_results.pop(_resolved(path), None)
            for index in self._scan_indexes.values():
                index.forget(path)    # a factory's new text, for the next files scanned
            return next((root for root in self.scanned_roots if _resolved(root) in _resolved(path).parents), None)

    # --- fixes -----------------------------------------------------------------------------

    def fix_all(self, document: Document, unsafe_fixes: bool = False) -> Optional[str]:
        """The document's text after `--fix` (safe fixes, unless asked), or None when excluded."""
        from dagguard.engine.fixes import decoded

        settings = self.settings_for(document.path)
        text = document.text
        if api.stdin_excluded(document.path, settings):
            return None
        project = self._project(document, settings, self._dirty_buffers(document))
        run = api.fix_stdin(text.encode("utf-8"), document.path, unsafe_fixes=unsafe_fixes, settings=settings,
                            now=self.now(), project=project)
        return decoded(run.files[0].fixed)

    def fix_one(self, document: Document, code: str, line: int, column: int) -> Optional[str]:
        """The document's text with one finding's fix applied, or None when it has none."""
        from dagguard.engine import fixes
        from dagguard.engine.deep_stack import run_deep

        settings = self.settings_for(document.path)
        project = self._project(document, settings, self._dirty_buffers(document))
        path = document.path or Path(api.STDIN)
        shown = display_path(document.path) if document.path is not None else api.STDIN
        fixed = run_deep(fixes.fix_one, document.text.encode("utf-8"), path, settings, self.now(), code, line,
                         column, shown, project)
        return fixes.decoded(fixed) if fixed is not None else None


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path
