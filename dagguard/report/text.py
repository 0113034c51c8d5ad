"""ruff's concise shape: `path:line:col: CODE message`, the advice indented below, a summary."""

from __future__ import annotations

from dagguard.engine.dag_listing import unseen_note
from dagguard.engine.findings import Finding, fix_applies
from dagguard.engine.results import CheckResult

BOLD, RED, YELLOW, CYAN, DIM, RESET = "\033[1m", "\033[31m", "\033[33m", "\033[36m", "\033[2m", "\033[0m"


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def summary_line(result: CheckResult) -> str:
    dags = f"{plural(result.clean_dag_count, 'DAG')} clean"
    if not result.findings:
        fixed = f" ({plural(result.fixed, 'problem')} fixed)" if result.fixed else ""
        return f"All checks passed{fixed}: {plural(result.files_checked, 'file')}, {dags}"
    found = len(result.findings) + result.fixed
    fixed = f", {result.fixed:,} fixed, {len(result.findings):,} remaining" if result.fixed else ""
    return (f"Found {plural(found, 'problem')} in "
            f"{plural(result.files_with_findings, 'file')} ({dags}{fixed})")


def fixable_line(result: CheckResult) -> str:
    """ruff's: how many --fix would fix, and how many more --unsafe-fixes would."""
    fixable = sum(fix_applies(f.fix_safety, result.unsafe_fixes) for f in result.findings)
    hidden = sum(f.fix_safety is not None and not fix_applies(f.fix_safety, result.unsafe_fixes) for f in result.findings)
    hint = (f" ({hidden:,} hidden {'fix' if hidden == 1 else 'fixes'} can be enabled with the `--unsafe-fixes` option)"
            if hidden else "")
    if fixable:
        return f"[*] {fixable:,} fixable with the `--fix` option{hint}"
    return f"No fixes available{hint}" if hidden else ""


def paint(text: str, color: bool, *styles: str) -> str:
    """`text` in ANSI `styles` when colour is on."""
    return f"{''.join(styles)}{text}{RESET}" if color else text


def code_style(finding: Finding) -> str:
    return RED if finding.severity == "error" else YELLOW


def help_line(finding: Finding, color: bool, indent: str = "  ") -> list[str]:
    """The finding's advice, indented, as zero or one line."""
    return [f"{indent}{paint(f'help: {finding.help}', color, DIM)}"] if finding.help else []


def with_summary(lines: list[str], result: CheckResult, color: bool, summary: bool) -> str:
    """The report's lines followed by the summary line (none with --quiet)."""
    if summary:
        fixable = fixable_line(result)
        lines = [*lines, paint(summary_line(result), color, BOLD), *([fixable] if fixable else [])]
        note = unseen_note(len(result.files_without_dags))
        if note is not None:
            lines.append(note)
    elif lines and lines[-1] == "":
        lines = lines[:-1]
    return "".join(f"{line}\n" for line in lines)


def format_text(result: CheckResult, color: bool, summary: bool = True) -> str:
    lines: list[str] = []
    for f in result.findings:
        colon = paint(":", color, CYAN)
        lines.append(f"{paint(f.path, color, BOLD)}{colon}{f.line}{colon}{f.column}{colon} "
                     f"{paint(f.code, color, BOLD, code_style(f))} {fix_marker(f, result)}{f.message}")
        lines.extend(help_line(f, color))
    return with_summary(lines, result, color, summary)


def fix_marker(finding: Finding, result: CheckResult) -> str:
    """`[*] ` before the message of a finding --fix (with this run's --unsafe-fixes) would fix,
    as ruff marks them in its concise, full and grouped output; none on what --fix left."""
    if result.after_fixes:
        return ""
    return "[*] " if fix_applies(finding.fix_safety, result.unsafe_fixes) else ""
