"""ruff's concise shape: `path:line:col: CODE message`, the advice indented below, a summary."""

from __future__ import annotations

from dagguard.engine.findings import Finding, fix_applies
from dagguard.engine.runner import CheckResult

_BOLD, _RED, _YELLOW, _CYAN, _DIM, _RESET = "\033[1m", "\033[31m", "\033[33m", "\033[36m", "\033[2m", "\033[0m"


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def summary_line(result: CheckResult) -> str:
    dags = f"{_plural(result.clean_dag_count, 'DAG')} clean"
    if not result.findings:
        fixed = f" ({_plural(result.fixed, 'problem')} fixed)" if result.fixed else ""
        return f"All checks passed{fixed}: {_plural(result.files_checked, 'file')}, {dags}"
    found = len(result.findings) + result.fixed
    fixed = f", {result.fixed:,} fixed, {len(result.findings):,} remaining" if result.fixed else ""
    return (f"Found {_plural(found, 'problem')} in "
            f"{_plural(result.files_with_findings, 'file')} ({dags}{fixed})")


def fixable_line(result: CheckResult) -> str:
    """ruff's: how many --fix would fix, and how many more --unsafe-fixes would."""
    fixable = sum(fix_applies(f.fix_safety, result.unsafe_fixes) for f in result.findings)
    hidden = sum(f.fix_safety is not None and not fix_applies(f.fix_safety, result.unsafe_fixes) for f in result.findings)
    hint = (f" ({hidden:,} hidden {'fix' if hidden == 1 else 'fixes'} can be enabled with the `--unsafe-fixes` option)"
            if hidden else "")
    if fixable:
        return f"[*] {fixable:,} fixable with the `--fix` option{hint}"
    return f"No fixes available{hint}" if hidden else ""


def format_text(result: CheckResult, color: bool) -> str:
    lines: list[str] = []
    for f in result.findings:
        if color:
            code_color = _RED if f.severity == "error" else _YELLOW
            lines.append(f"{_BOLD}{f.path}{_RESET}{_CYAN}:{_RESET}{f.line}{_CYAN}:{_RESET}{f.column}"
                         f"{_CYAN}:{_RESET} {_BOLD}{code_color}{f.code}{_RESET} {_marker(f, result)}{f.message}")
            if f.help:
                lines.append(f"  {_DIM}help: {f.help}{_RESET}")
        else:
            lines.append(f"{f.path}:{f.line}:{f.column}: {f.code} {_marker(f, result)}{f.message}")
            if f.help:
                lines.append(f"  help: {f.help}")
    summary = summary_line(result)
    lines.append(f"{_BOLD}{summary}{_RESET}" if color else summary)
    fixable = fixable_line(result)
    if fixable:
        lines.append(fixable)
    return "\n".join(lines) + "\n"


def _marker(finding: Finding, result: CheckResult) -> str:
    # Findings --fix (with this run's --unsafe-fixes) would fix are marked, as ruff marks them.
    return "[*] " if fix_applies(finding.fix_safety, result.unsafe_fixes) else ""
