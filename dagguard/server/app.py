"""The pygls server and its handlers: documents are checked on open and save, and after a
pause in typing (debounced), on a worker thread; results are published only for the text they
were computed from. Nothing a buffer holds can stop the server: a text that does not parse is a
DG000 finding (the linter's own bounds on size and nesting apply), and a bug in a check is
logged, not raised."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from dagguard import __version__
from dagguard.config import ConfigError
from dagguard.engine.noqa import physical_lines
from dagguard.server import actions
from dagguard.server.diagnostics import document_path, to_diagnostics
from dagguard.server.documents import CONFIG_FILE_NAMES, Document, Options, ServerState
from dagguard.server.hover import hover_text
from dagguard.server.positions import from_client_column, line_at

T = TypeVar("T")
log = logging.getLogger(__name__)

_WATCHERS = ("**/pyproject.toml", "**/*.py")


class DagguardServer(LanguageServer):
    """A LanguageServer holding the linter's state and one worker thread that checks."""

    def __init__(self) -> None:
        super().__init__("dagguard", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.state = ServerState()
        self.pending: dict[str, asyncio.Task] = {}
        self.background: set[asyncio.Task] = set()
        # One worker: checks, scans and fixes share the state and the linter's one deep-stack
        # thread anyway, and pygls's own pool must stay free to read stdin.
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dagguard-server")
        self.encoding = "utf-16"

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.worker, function, *args)

    def spawn(self, coroutine) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    def show_error(self, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"dagguard: {message}"))

    def log(self, message: str) -> None:
        self.window_log_message(types.LogMessageParams(types.MessageType.Warning, f"dagguard: {message}"))


# --- checking and publishing -----------------------------------------------------------------


def schedule(ls: DagguardServer, uri: str, delay: float) -> None:
    """Check the document after `delay` seconds; a newer schedule replaces a waiting one."""
    waiting = ls.pending.pop(uri, None)
    if waiting is not None and not waiting.done():
        waiting.cancel()
    ls.pending[uri] = ls.spawn(_check_later(ls, uri, delay))


async def _check_later(ls: DagguardServer, uri: str, delay: float) -> None:
    if delay > 0:
        await asyncio.sleep(delay)
    document = ls.state.documents.get(uri)
    if document is None:
        return
    text = document.text
    # An edit, not the first check: opening a factory does not re-check its callers.
    changed = document.checked_text is not None and document.checked_text != text
    try:
        result = await ls.run(ls.state.check, document, text)
    except ConfigError as exc:
        ls.show_error(str(exc))
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, [], document.version))
        return
    except Exception as exc:   # a bug in the linter: logged, the server goes on
        log.exception("checking %s", uri)
        ls.log(f"internal error checking {uri}: {exc!r} (please report this bug)")
        return
    if ls.state.documents.get(uri) is not document or document.text != text:
        return   # changed meanwhile: the newer check publishes
    ls.state.record(document, text, result)
    await publish_all(ls, checked=document)
    if changed and document.path is not None:
        # A factory or constants module edited in this buffer: its callers' DAGs may change.
        for dependent in ls.state.dependents(document.path):
            schedule(ls, dependent.uri, 0)
    root = ls.state.scan_root(document)
    if root is not None:
        ls.spawn(scan(ls, root))


async def publish_all(ls: DagguardServer, checked: Optional[Document] = None) -> None:
    """Publish the `checked` document, and every other open one whose findings changed (DG302
    links them). The checked one always: the client has moved its old diagnostics along with
    the edits, so unchanged findings must be sent again to put them back where they are."""
    for document in list(ls.state.documents.values()):
        if document.result is None and document.findings == ():
            continue
        text = document.checked_text or ""
        try:
            findings = await ls.run(ls.state.findings, document)
        except Exception as exc:
            log.exception("combining %s", document.uri)
            ls.log(f"internal error combining {document.uri}: {exc!r} (please report this bug)")
            continue
        if ls.state.documents.get(document.uri) is not document or document.checked_text != text:
            continue
        if findings == document.findings and document.published and document is not checked:
            continue
        document.findings = findings
        document.published = True
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            document.uri, to_diagnostics(findings, document.uri, text, ls.encoding), document.version))


async def scan(ls: DagguardServer, root: Path) -> None:
    """Check the project's files on disk (one at a time, so a buffer's check waits at most
    for one file) for the DAG sites DG302 compares; then publish what changed."""
    caches: dict = {}   # one result cache per settings for the whole scan
    try:
        files = await ls.run(ls.state.files_to_scan, root)
        open_paths = {d.path.resolve() for d in ls.state.documents.values() if d.path is not None}
        for path in files:
            if path.resolve() not in open_paths:
                await ls.run(ls.state.scan_file, path, root, caches)
        await ls.run(ls.state.save_caches, caches)
    except ConfigError as exc:
        ls.show_error(str(exc))
        return
    except Exception as exc:
        log.exception("scanning %s", root)
        ls.log(f"internal error scanning {root}: {exc!r} (please report this bug)")
        return
    await publish_all(ls)


def recheck_all(ls: DagguardServer) -> None:
    for uri in list(ls.state.documents):
        schedule(ls, uri, 0)


# --- the server --------------------------------------------------------------------------


def build_server() -> DagguardServer:
    """A dagguard language server with every handler registered."""
    ls = DagguardServer()

    @ls.feature(types.INITIALIZE)
    def initialize(ls: DagguardServer, params: types.InitializeParams) -> None:
        ls.encoding = str(ls.workspace.position_encoding or "utf-16")
        roots = [document_path(folder.uri) for folder in params.workspace_folders or []]
        if not roots and params.root_uri:
            roots = [document_path(params.root_uri)]
        try:
            options = Options.parse(params.initialization_options)
        except ConfigError as exc:
            ls.show_error(str(exc))
            options = None
        ls.state = ServerState(options, [r for r in roots if r is not None])

    @ls.feature(types.INITIALIZED)
    async def initialized(ls: DagguardServer, params: types.InitializedParams) -> None:
        capabilities = ls.client_capabilities
        watched = (capabilities.workspace.did_change_watched_files
                   if capabilities.workspace is not None else None)
        if watched is not None and watched.dynamic_registration:
            options = types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern=glob) for glob in _WATCHERS])
            ls.spawn(ls.client_register_capability_async(types.RegistrationParams(registrations=[
                types.Registration(id="dagguard-watched-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                   register_options=options)])))

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DagguardServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        ls.state.open(item.uri, document_path(item.uri), item.text, item.version)
        schedule(ls, item.uri, 0)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DagguardServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        document = ls.state.documents.get(uri)
        if document is None:
            return
        document.text = ls.workspace.get_text_document(uri).source   # pygls applied the changes
        document.version = params.text_document.version
        schedule(ls, uri, ls.state.options.debounce_seconds)

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: DagguardServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        document = ls.state.documents.get(uri)
        if document is not None:
            if params.text is not None:
                document.text = params.text
            schedule(ls, uri, 0)

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DagguardServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.state.close(uri)
        waiting = ls.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    @ls.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(ls: DagguardServer, params: types.DidChangeWatchedFilesParams) -> None:
        paths = [(document_path(change.uri), change.type) for change in params.changes]
        if any(path is not None and path.name in CONFIG_FILE_NAMES for path, _ in paths):
            ls.state.reload()
            recheck_all(ls)
            return
        for path, change in paths:
            if path is None or path.suffix != ".py":
                continue
            root = ls.state.forget_disk_file(path)
            if root is not None and change != types.FileChangeType.Deleted and not any(
                    d.path is not None and d.path.resolve() == path.resolve() for d in ls.state.documents.values()):
                try:
                    await ls.run(ls.state.scan_file, path, root)
                except Exception as exc:
                    ls.log(f"internal error checking {path}: {exc!r} (please report this bug)")
            for dependent in ls.state.dependents(path):
                schedule(ls, dependent.uri, 0)
        await publish_all(ls)

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: DagguardServer, params: types.DidChangeConfigurationParams) -> None:
        options = None
        # Settings for other tools (or none) keep the options; dagguard's replace them.
        if isinstance(params.settings, dict) and isinstance(params.settings.get("dagguard"), dict):
            try:
                options = Options.parse(params.settings)
            except ConfigError as exc:
                ls.show_error(str(exc))
                return
        ls.state.reload(options)
        recheck_all(ls)

    @ls.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, actions.FIX_ALL_KIND]))
    async def code_action(ls: DagguardServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        document = ls.state.documents.get(params.text_document.uri)
        if document is None:
            return []
        return await _code_actions(ls, document, params)

    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: DagguardServer, params: types.HoverParams) -> Optional[types.Hover]:
        document = ls.state.documents.get(params.text_document.uri)
        if document is None or document.checked_text is None:
            return None
        lines = physical_lines(document.checked_text)
        line = params.position.line + 1
        column = from_client_column(line_at(lines, line), params.position.character, ls.encoding) + 1
        # Every finding whose range holds the position, the innermost first (a DAG-wide
        # finding's range holds its keywords' findings).
        hits = sorted((f for f in document.findings if _holds(f, line, column)),
                      key=lambda f: (f.line, f.column), reverse=True)
        texts = [text for text in (hover_text(f.code, f.help) for f in hits) if text is not None]
        if texts:
            return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(texts)))
        return None

    @ls.feature(types.SHUTDOWN)
    def shutdown(ls: DagguardServer, *args: Any) -> None:
        for task in list(ls.pending.values()) + list(ls.background):
            task.cancel()
        ls.pending.clear()
        ls.worker.shutdown(wait=False, cancel_futures=True)

    return ls


def _holds(finding, line: int, column: int) -> bool:
    """Is (line, column) within the finding's range (its start, for an empty range)?"""
    start, end = (finding.line, finding.column), (finding.end_line, finding.end_column)
    return start <= (line, column) < end or start == (line, column)


async def _code_actions(ls: DagguardServer, document: Document,
                        params: types.CodeActionParams) -> list[types.CodeAction]:
    only = params.context.only
    text, version, uri = document.text, document.version, document.uri
    found: list[types.CodeAction] = []
    for diagnostic in params.context.diagnostics:
        data = diagnostic.data if isinstance(diagnostic.data, dict) else None
        if diagnostic.source != "dagguard" or data is None or not actions.wants(only, types.CodeActionKind.QuickFix):
            continue
        code = str(diagnostic.code)
        fix = data.get("fix")
        if isinstance(fix, dict) and fix.get("safety") in ("safe", "unsafe"):
            try:
                fixed = await ls.run(ls.state.fix_one, document, code, int(data["line"]), int(data["column"]))
            except Exception as exc:
                ls.log(f"internal error fixing {uri}: {exc!r} (please report this bug)")
                fixed = None
            edit = actions.text_edit(text, fixed, ls.encoding) if fixed is not None else None
            if edit is not None:
                found.append(actions.quick_fix(diagnostic, uri, version, edit, fix["safety"], fix.get("description")))
        if code != "DG000":   # a file that does not parse cannot be edited safely, as --add-noqa says
            edit = actions.text_edit(text, actions.add_noqa_text(text, int(data["line"]), code), ls.encoding)
            if edit is not None:
                found.append(actions.noqa_action(diagnostic, uri, version, edit))
    fix_all_kinds = [kind for kind in (actions.FIX_ALL_KIND, types.CodeActionKind.SourceFixAll)
                     if only and actions.wants(only, kind)] or ([actions.FIX_ALL_KIND] if not only else [])
    if fix_all_kinds:
        try:
            fixed = await ls.run(ls.state.fix_all, document)
        except ConfigError as exc:
            ls.show_error(str(exc))
            fixed = None
        except Exception as exc:
            ls.log(f"internal error fixing {uri}: {exc!r} (please report this bug)")
            fixed = None
        edit = actions.text_edit(text, fixed, ls.encoding) if fixed is not None else None
        if edit is not None:
            found.append(actions.fix_all_action(uri, version, edit, actions.FIX_ALL_KIND))
    return found


def serve() -> None:
    """Run the server over stdio."""
    build_server().start_io()
