"""GitHub Actions workflow commands: findings become annotations on the pull request."""

from __future__ import annotations

from dagguard.engine.findings import Finding
from dagguard.engine.results import CheckResult


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _position(f: Finding) -> str:
    # GitHub's toolkit forbids col/endColumn when the annotation spans several lines.
    if f.line != f.end_line:
        return f"line={f.line},endLine={f.end_line}"
    return f"line={f.line},col={f.column},endLine={f.end_line},endColumn={f.end_column}"


def format_github(result: CheckResult, color: bool) -> str:
    lines = []
    for f in result.findings:
        level = "error" if f.severity == "error" else "warning"
        message = f.message + (f" (help: {f.help})" if f.help else "")
        lines.append(
            f"::{level} title={_escape_property(f'dagguard ({f.code})')},file={_escape_property(f.path)},"
            f"{_position(f)}::{_escape_data(f'{f.code} {message}')}"
        )
    return "\n".join(lines) + ("\n" if lines else "")
