"""The `dagguard` command: a thin typer layer that parses options, calls the API, prints, exits.

Exit codes follow ruff: 0 clean, 1 findings, 2 usage or configuration error.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Optional

import typer

if TYPE_CHECKING:
    import datetime

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Stops Apache Airflow pipelines from flooding schedulers and duplicating data.",
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from dagguard import __version__

        typer.echo(f"dagguard {__version__}")
        raise typer.Exit()


@app.callback()
def _command_group(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Stops Apache Airflow pipelines from flooding schedulers and duplicating data."""


def fail(message: str) -> "typer.Exit":
    """Print one line on stderr and return the exit for a usage/config error."""
    typer.echo(f"dagguard: error: {message}", err=True)
    return typer.Exit(code=2)


# --- linter commands -------------------------------------------------------------------------


def _use_color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def _codes(values: Optional[list[str]]) -> Optional[tuple[str, ...]]:
    if not values:
        return None
    return tuple(code.strip().upper() for value in values for code in value.split(",") if code.strip())


@app.command()
def check(
    paths: list[Path] = typer.Argument(None, help="Files or folders to check (default: the current folder)."),
    output_format: str = typer.Option("text", "--format", help="text, json, sarif or github."),
    select: Optional[list[str]] = typer.Option(None, "--select", help="Only these codes or prefixes (replaces the config's select)."),
    ignore: Optional[list[str]] = typer.Option(None, "--ignore", help="Also ignore these codes or prefixes."),
    config: Optional[Path] = typer.Option(None, "--config", help="Read [tool.dagguard] from this file instead of the nearest pyproject.toml."),
    now: Optional[str] = typer.Option(None, "--now", metavar="ISO8601", help="Fix 'now' for run-count estimates, for reproducible output."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when problems are found."),
    fix: bool = typer.Option(False, "--fix", help="Apply fixes (safe ones; unsafe ones too with --unsafe-fixes)."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Also apply (and count) the fixes that change what runs."),
    diff: bool = typer.Option(False, "--diff", help="Print the diff --fix would write; write nothing (exit 1 when there is one)."),
    fix_only: bool = typer.Option(False, "--fix-only", help="Apply fixes and report only what was fixed (implies --fix)."),
    show_fixes: bool = typer.Option(False, "--show-fixes", help="List the fixes applied, per file."),
    exit_non_zero_on_fix: bool = typer.Option(False, "--exit-non-zero-on-fix", help="Exit 1 when any fix was applied, even if nothing is left."),
    add_noqa: bool = typer.Option(False, "--add-noqa", help="Add `# noqa: CODES` for every current finding."),
    stdin_filename: Optional[Path] = typer.Option(None, "--stdin-filename",
                                                  help="The name of the file read from stdin (`-`), for config and messages."),
) -> None:
    """Check DAG files without importing or running them."""
    from dagguard.api import ConfigError, check_paths, discover_settings
    from dagguard.report import FORMATS, formatter

    if output_format not in FORMATS:
        raise fail(f"--format must be one of {', '.join(FORMATS)}, got {output_format!r}")
    targets = list(paths) if paths else [Path(".")]
    try:
        fixed_now = _parse_now(now)
        from_stdin = [str(p) for p in targets] == ["-"]
        settings = discover_settings([stdin_filename] if from_stdin and stdin_filename else
                                     ([] if from_stdin else targets), config)
        settings = settings.with_overrides(
            select=_codes(select),
            ignore=(settings.ignore + _codes(ignore)) if ignore else None,
        )
        if fix or fix_only or diff or add_noqa:
            from dagguard.cli_fixes import FixOptions, run_fixes, run_stdin_fixes

            options = FixOptions(unsafe_fixes, diff, fix_only, show_fixes, exit_non_zero_on_fix, add_noqa, exit_zero)
            if from_stdin:
                raise typer.Exit(run_stdin_fixes(stdin_filename, settings, fixed_now, options, output_format))
            raise typer.Exit(run_fixes(targets, settings, fixed_now, options, output_format, _use_color()))
        result = check_paths(targets, settings=settings, now=fixed_now)
        result = replace(result, unsafe_fixes=unsafe_fixes)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    sys.stdout.write(formatter(output_format)(result, _use_color() and output_format == "text"))
    print_warnings(result.warnings)
    for error in result.internal_errors:
        typer.echo(f"dagguard: {error} (please report this bug)", err=True)
    if result.internal_errors:
        raise typer.Exit(code=2)
    raise typer.Exit(code=0 if exit_zero or not result.findings else 1)


def print_warnings(warnings: Iterable[str]) -> None:
    for warning in warnings:
        typer.echo(f"dagguard: warning: {warning}", err=True)


def _parse_now(value: Optional[str]) -> Optional["datetime.datetime"]:
    if value is None:
        return None
    import datetime

    from dagguard.api import ConfigError

    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"--now: {value!r} is not an ISO 8601 date-time (e.g. 2026-11-30T12:00:00Z)") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)


@app.command("rules")
def list_rules() -> None:
    """List every rule: code, name, severity, whether it can be fixed, summary."""
    from dagguard.rules import ALL_RULES

    if _use_color():
        from rich.console import Console
        from rich.table import Table

        table = Table("code", "name", "severity", "fixable", "summary")
        for rule in ALL_RULES:
            table.add_row(rule.code, rule.name, rule.severity, "yes" if rule.fixable else "", rule.summary)
        Console().print(table)
        return
    for rule in ALL_RULES:
        fixable = "fixable" if rule.fixable else "-"
        typer.echo(f"{rule.code}\t{rule.name}\t{rule.severity}\t{fixable}\t{rule.summary}")


@app.command("rule")
def show_rule(code: str = typer.Argument(..., help="A rule code, e.g. DG101, or its name.")) -> None:
    """Print a rule's page: what it flags, why, bad and good examples, how to fix."""
    from dagguard.rules import ALL_RULES
    from dagguard.rules.pages import page_text

    wanted = code.strip()
    rule = next((r for r in ALL_RULES if wanted.upper() == r.code or wanted == r.name), None)
    if rule is None:
        raise fail(f"no rule {wanted!r}; `dagguard rules` lists them")
    text = page_text(rule.code)
    if text is None:
        raise fail(f"the page of {rule.code} is missing from this installation")
    if _use_color():
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(text))
    else:
        sys.stdout.write(text)


# --- runtime commands (doctor, ledger) -------------------------------------------------------


@app.command()
def doctor(
    db: Optional[str] = typer.Option(
        None, "--db", metavar="URL",
        help="SQLAlchemy URL of the Airflow metadata DB. Default: AIRFLOW__DATABASE__SQL_ALCHEMY_CONN, "
             "then $AIRFLOW_HOME/airflow.cfg, then $AIRFLOW_HOME/airflow.db.",
    ),
    since: Optional[str] = typer.Option(
        None, "--since", metavar="TIME",
        help="A deploy time (ISO 8601, e.g. 2026-11-30T14:00Z): catchup-flood lists runs created after it.",
    ),
    output_format: str = typer.Option("text", "--format", help="text, json or csv (csv: affected intervals)."),
    max_queued: int = typer.Option(100, "--max-queued", metavar="N",
                                   help="catchup-flood: more than N queued (or created) scheduled runs."),
    queued_age: int = typer.Option(30, "--queued-age", metavar="MINUTES",
                                   help="queued-never-scheduled: queued longer than this."),
    checks: list[str] = typer.Option([], "--check", metavar="NAME", help="Run only this check (repeatable)."),
    repair: Optional[str] = typer.Option(None, "--repair", metavar="NAME",
                                         help="Show the rows a repair would change (stuck-backfill-runs)."),
    yes: bool = typer.Option(False, "--yes", help="Apply the --repair in one transaction."),
) -> None:
    """Diagnose an Airflow 3 metadata DB: stuck backfill runs, catchup floods (read-only by default)."""
    # Imported here so the linter commands never load SQLAlchemy or the doctor package.
    from dagguard import doctor as api

    if output_format not in api.FORMATS:
        raise fail(f"--format must be one of {', '.join(api.FORMATS)}")
    if yes and not repair:
        raise fail("--yes applies a repair; use it with --repair stuck-backfill-runs")
    try:
        if repair:
            if output_format == "csv":
                raise api.DoctorError("--repair prints text or json, not csv")
            result = api.repair(repair, db, apply=yes)
            typer.echo(api.render_repair(result, output_format), nl=False)
            raise typer.Exit(result.exit_code)
        options = api.build_options(since=since, max_queued=max_queued,
                                    queued_age_minutes=queued_age, checks=checks)
        diagnosis = api.diagnose(db, options)
    except api.DoctorError as exc:
        raise fail(str(exc)) from None
    typer.echo(api.render(diagnosis, output_format), nl=False)
    raise typer.Exit(diagnosis.exit_code)


@app.command()
def ledger(
    conn: str = typer.Option(..., "--conn", metavar="URL",
                             help="Database holding dagguard_write_log: sqlite:///f.db, duckdb:///f.duckdb "
                                  "or postgresql://user@host/db (opened read-only where the driver allows)."),
    table: Optional[str] = typer.Option(None, "--table", help="Only writes into this target table."),
    output_format: str = typer.Option("text", "--format", help="text or json."),
) -> None:
    """List idempotent writes; exit 1 if an interval was written twice with different checksums."""
    # Imported here so the linter commands never load the runtime helpers.
    from dagguard.idempotent import IdempotentWriteError, read_ledger
    from dagguard.idempotent.ledger_render import FORMATS, exit_code, render

    if output_format not in FORMATS:
        raise fail(f"--format must be one of {', '.join(FORMATS)}")
    try:
        report = read_ledger(conn, table=table)
    except IdempotentWriteError as exc:
        raise fail(str(exc)) from None
    typer.echo(render(report, output_format), nl=False)
    raise typer.Exit(exit_code(report))


def main() -> None:
    """Console-script entry point."""
    app()
