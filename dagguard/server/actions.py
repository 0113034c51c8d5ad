"""Code actions: a finding's own fix (safe ones preferred quick fixes, unsafe ones labelled),
"fix all" (`source.fixAll.dagguard`: what `--fix` writes) and "add noqa" (what `--add-noqa`
writes for that finding: merged into the line's noqa comment). Each is one text edit that
turns the buffer into the linter's output, covering only the lines that differ."""

from __future__ import annotations

from typing import Optional, Sequence

from lsprotocol import types

from dagguard.engine.noqa import physical_lines
from dagguard.server.positions import to_client_column

FIX_ALL_KIND = "source.fixAll.dagguard"
TITLE_FIX_ALL = "dagguard: fix all safe fixes"


def text_edit(before: str, after: str, encoding: str) -> Optional[types.TextEdit]:
    """One edit turning `before` into `after`: the lines between their common head and tail."""
    if before == after:
        return None
    old, new = physical_lines(before), physical_lines(after)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    start = types.Position(head, 0)
    if tail:
        end = types.Position(len(old) - tail, 0)
    elif old and not old[-1].endswith(("\n", "\r")):   # up to the end of a last line with no ending
        end = types.Position(len(old) - 1, to_client_column(old[-1], len(old[-1]) + 1, encoding))
    else:
        end = types.Position(len(old), 0)
    return types.TextEdit(types.Range(start, end), "".join(new[head:len(new) - tail]))


def workspace_edit(uri: str, version: Optional[int], edit: types.TextEdit) -> types.WorkspaceEdit:
    identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(identifier, [edit])])


def fix_title(code: str, description: Optional[str], safety: str) -> str:
    label = f"dagguard ({code}): {description or 'apply the fix'}"
    return label if safety == "safe" else f"{label} (unsafe fix)"


def quick_fix(diagnostic: types.Diagnostic, uri: str, version: Optional[int], edit: types.TextEdit,
              safety: str, description: Optional[str]) -> types.CodeAction:
    return types.CodeAction(
        title=fix_title(str(diagnostic.code), description, safety),
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=safety == "safe",
        edit=workspace_edit(uri, version, edit),
    )


def noqa_action(diagnostic: types.Diagnostic, uri: str, version: Optional[int],
                edit: types.TextEdit) -> types.CodeAction:
    return types.CodeAction(
        title=f"dagguard ({diagnostic.code}): add # noqa: {diagnostic.code}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=workspace_edit(uri, version, edit),
    )


def fix_all_action(uri: str, version: Optional[int], edit: types.TextEdit,
                   kind: str = FIX_ALL_KIND) -> types.CodeAction:
    return types.CodeAction(title=TITLE_FIX_ALL, kind=kind, edit=workspace_edit(uri, version, edit))


def wants(only: Optional[Sequence[str]], kind: str) -> bool:
    """Does the client's `only` filter admit actions of `kind` (a kind admits its sub-kinds)?"""
    if not only:
        return True
    return any(kind == wanted or kind.startswith(wanted + ".") for wanted in only)


def add_noqa_text(text: str, line: int, code: str) -> str:
    """`text` with `code` added to the noqa comment of the finding's line, as --add-noqa does."""
    from dagguard.engine.add_noqa import add_noqa_to_text

    return add_noqa_to_text(text, {line: [code]})
