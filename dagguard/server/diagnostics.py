"""Findings as LSP diagnostics: the message exactly as `dagguard check` prints it, the code
and its page, the severity mapped, the help as related information, the DAG and the fix in
`data` (code actions read it back)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Sequence

from lsprotocol import types

from dagguard.engine.findings import Finding
from dagguard.server.positions import line_at, to_client_column

SOURCE = "dagguard"

_SEVERITIES = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning}


@lru_cache(maxsize=None)
def rule_page_uri(code: str) -> Optional[str]:
    """A file:// URI of the rule's page (rules/DGnnn.md in a checkout, the wheel's copy), if present."""
    from dagguard.rules.pages import pages_folder

    folder = pages_folder()
    page = folder / f"{code}.md" if folder is not None else None
    return page.as_uri() if page is not None and page.is_file() else None


def finding_range(finding: Finding, lines: Sequence[str], encoding: str) -> types.Range:
    """The finding's span in client positions (the linter's end column is exclusive, as LSP's)."""
    start = types.Position(finding.line - 1,
                           to_client_column(line_at(lines, finding.line), finding.column, encoding))
    end_line = max(finding.end_line, finding.line)
    end_column = finding.end_column if finding.end_line >= finding.line else finding.column
    end = types.Position(end_line - 1, to_client_column(line_at(lines, end_line), end_column, encoding))
    if (end.line, end.character) < (start.line, start.character):
        end = start
    return types.Range(start, end)


def finding_data(finding: Finding) -> dict[str, Any]:
    """What a diagnostic carries for code actions and hover: the rule, the DAG, the fix."""
    fix = ({"safety": finding.fix_safety, "description": finding.fix_description}
           if finding.fix_safety is not None else None)
    return {"rule": finding.rule, "dag_id": finding.dag_id, "line": finding.line, "column": finding.column,
            "fix": fix}


def to_diagnostic(finding: Finding, uri: str, lines: Sequence[str], encoding: str) -> types.Diagnostic:
    """One finding as an LSP diagnostic. The help has no place of its own, so its related
    information points at the finding's own range (clients show it as a line below)."""
    where = finding_range(finding, lines, encoding)
    page = rule_page_uri(finding.code)
    related = ([types.DiagnosticRelatedInformation(types.Location(uri, where), f"help: {finding.help}")]
               if finding.help else None)
    return types.Diagnostic(
        range=where,
        message=finding.message,
        severity=_SEVERITIES.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=page) if page else None,
        source=SOURCE,
        related_information=related,
        data=finding_data(finding),
    )


def to_diagnostics(findings: Sequence[Finding], uri: str, text: str, encoding: str) -> list[types.Diagnostic]:
    from dagguard.engine.noqa import physical_lines

    lines = physical_lines(text)
    return [to_diagnostic(finding, uri, lines, encoding) for finding in findings]


def document_path(uri: str) -> Optional[Path]:
    """The file a document URI names (None for an untitled or remote buffer)."""
    from pygls.uris import to_fs_path

    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None
