"""ruff's concise shape: `path:line:col: CODE message`, the advice indented below, a summary."""

from __future__ import annotations

from dagguard.engine.dag_listing import unseen_note
from dagguard.engine.runner import CheckResult

_BOLD, _RED, _YELLOW, _CYAN, _DIM, _RESET = "\033[1m", "\033[31m", "\033[33m", "\033[36m", "\033[2m", "\033[0m"


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def summary_line(result: CheckResult) -> str:
    dags = f"{_plural(result.clean_dag_count, 'DAG')} clean"
    if not result.findings:
        return f"All checks passed: {_plural(result.files_checked, 'file')}, {dags}"
    return (f"Found {_plural(len(result.findings), 'problem')} in "
            f"{_plural(result.files_with_findings, 'file')} ({dags})")


def format_text(result: CheckResult, color: bool) -> str:
    lines: list[str] = []
    for f in result.findings:
        if color:
            code_color = _RED if f.severity == "error" else _YELLOW
            lines.append(f"{_BOLD}{f.path}{_RESET}{_CYAN}:{_RESET}{f.line}{_CYAN}:{_RESET}{f.column}"
                         f"{_CYAN}:{_RESET} {_BOLD}{code_color}{f.code}{_RESET} {f.message}")
            if f.help:
                lines.append(f"  {_DIM}help: {f.help}{_RESET}")
        else:
            lines.append(f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}")
            if f.help:
                lines.append(f"  help: {f.help}")
    summary = summary_line(result)
    lines.append(f"{_BOLD}{summary}{_RESET}" if color else summary)
    note = unseen_note(len(result.files_without_dags))
    if note is not None:
        lines.append(note)
    return "\n".join(lines) + "\n"
