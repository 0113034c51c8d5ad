"""The printing half of `dagguard check --fix/--diff/--fix-only/--add-noqa` (ruff's semantics);
the engine (dagguard.engine.fixes, dagguard.engine.add_noqa) does the work."""

from __future__ import annotations

import datetime as dt
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import typer

from dagguard.cli_output import print_warnings
from dagguard.config import Settings
from dagguard.engine.fixes import DroppedFix, FileFix
from dagguard.engine.runner import CheckResult
from dagguard.report.text import plural


@dataclass(frozen=True)
class FixOptions:
    unsafe_fixes: bool = False
    diff: bool = False
    fix_only: bool = False
    show_fixes: bool = False
    exit_non_zero_on_fix: bool = False
    add_noqa: bool = False
    exit_zero: bool = False


def run_fixes(targets: Sequence[Path], settings: Settings, now: Optional[dt.datetime], options: FixOptions,
              output_format: str, color: bool) -> int:
    """Fix (or diff, or add noqa to) the files, print as ruff does, and return the exit code."""
    from dagguard import api
    from dagguard.engine.fixes import unified_diff
    from dagguard.report import HUMAN_FORMATS, formatter

    if options.add_noqa:
        added = api.add_noqa(targets, settings=settings, now=now)
        typer.echo(f"Added {plural(added, 'noqa directive')}.", err=True)
        return 0
    run = api.fix_paths(targets, unsafe_fixes=options.unsafe_fixes, write=not options.diff,
                        settings=settings, now=now)
    report_dropped(run.dropped)
    if options.diff:
        changed = [f for f in run.files if f.changed]
        sys.stdout.write("".join(unified_diff(f) for f in changed))
        typer.echo(f"Would fix {plural(run.applied, 'problem')}.", err=True)
        return 1 if changed else 0
    if options.fix_only:
        typer.echo(f"Fixed {plural(run.applied, 'problem')}." if run.applied else "No problems fixed.")
    else:
        sys.stdout.write(formatter(output_format)(run.result, color and output_format in HUMAN_FORMATS))
    if options.show_fixes:
        text = show_fixes(run.files)
        if output_format in HUMAN_FORMATS:
            sys.stdout.write(text)
        else:
            sys.stderr.write(text)
    print_warnings(run.result.warnings)
    for error in run.result.internal_errors:
        typer.echo(f"dagguard: {error} (please report this bug)", err=True)
    return _exit_code(run.result, bool(run.applied), options)


def _exit_code(result: CheckResult, applied: bool, options: FixOptions) -> int:
    """2 for internal errors; else 1 for an applied fix with --exit-non-zero-on-fix, 0 with
    --fix-only or --exit-zero, and 1 when findings are left."""
    if result.internal_errors:
        return 2
    if options.exit_non_zero_on_fix and applied:
        return 1
    if options.fix_only or options.exit_zero:
        return 0
    return 1 if result.findings else 0


def report_dropped(dropped_fixes: Sequence[DroppedFix]) -> None:
    for dropped in dropped_fixes:
        typer.echo(f"dagguard: warning: {dropped.path}:{dropped.line}: {dropped.code} fix not applied "
                   f"({dropped.description}): {dropped.reason}", err=True)


def show_fixes(files: Sequence[FileFix]) -> str:
    """ruff's --show-fixes listing: per file, how many of each code were fixed."""
    from dagguard.engine.runner import display_path

    fixed = [f for f in files if f.applied]
    if not fixed:
        return "No problems fixed.\n"
    lines = [f"Fixed {plural(sum(len(f.applied) for f in fixed), 'problem')}:"]
    for file_fix in fixed:
        lines.append(f"- {display_path(file_fix.path)}:")
        counts = Counter((a.code, a.rule) for a in file_fix.applied)
        lines.extend(f"    {count} × {code} ({rule})" for (code, rule), count in sorted(counts.items()))
    return "\n".join(lines) + "\n"


def run_stdin_fixes(filename: Optional[Path], settings: Settings, now: Optional[dt.datetime], options: FixOptions,
                    output_format: str) -> int:
    """`check --fix -`: the fixed source on stdout, the findings left on stderr (what editors call)."""
    from dagguard import api
    from dagguard.engine.fixes import unified_diff
    from dagguard.report import formatter

    if options.add_noqa:
        raise api.ConfigError("--add-noqa edits files; it does not read stdin")
    run = api.fix_stdin(api.read_stdin(), filename, unsafe_fixes=options.unsafe_fixes, settings=settings, now=now)
    file_fix = run.files[0]
    report_dropped(file_fix.dropped)
    if options.diff:
        sys.stdout.write(unified_diff(file_fix))
        return 1 if file_fix.changed else 0
    sys.stdout.buffer.write(file_fix.fixed)
    sys.stdout.flush()
    if not options.fix_only:
        sys.stderr.write(formatter(output_format)(run.result, False))
    if options.show_fixes:
        sys.stderr.write(show_fixes([file_fix]))
    return _exit_code(run.result, bool(file_fix.applied), options)
