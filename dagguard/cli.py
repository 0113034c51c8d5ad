"""The `dagguard` command: a thin typer layer that parses options, calls the API, prints, exits.

Exit codes follow ruff: 0 clean, 1 findings, 2 usage or configuration error.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from dagguard import typer_plain
from dagguard.cli_help import RuffStyleCommand
from dagguard.cli_output import print_warnings

typer_plain.install()

if TYPE_CHECKING:
    import datetime

    from dagguard.config import Settings
    from dagguard.engine.results import CheckResult

app = typer.Typer(
    add_completion=False,
    rich_markup_mode=None,  # plain help, as ruff's; rich markup ate `[tool.dagguard]`
    context_settings={"help_option_names": ["-h", "--help"]},
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


_FORMATS_HELP = "concise, full, json, json-lines, junit, grouped, github, gitlab, sarif or rdjson (also --format)"


@app.command(cls=RuffStyleCommand)
def check(
    paths: Optional[list[Path]] = typer.Argument(
        None, metavar="PATHS", show_default=False,
        help="Files or folders to check, or - for standard input [default: .]"),
    output_format: str = typer.Option("concise", "--output-format", "--format", metavar="OUTPUT_FORMAT",
                                      help=_FORMATS_HELP),
    output_file: Optional[Path] = typer.Option(None, "--output-file", "-o", metavar="OUTPUT_FILE",
                                               help="Write the report to this file instead of stdout"),
    select: Optional[list[str]] = typer.Option(None, "--select", metavar="RULE_CODE",
                                               help="Only these rule codes or prefixes (ALL: every rule); "
                                                    "replaces the configured selection"),
    extend_select: Optional[list[str]] = typer.Option(None, "--extend-select", metavar="RULE_CODE",
                                                      help="Also these rule codes or prefixes"),
    ignore: Optional[list[str]] = typer.Option(None, "--ignore", metavar="RULE_CODE",
                                               help="Ignore these rule codes or prefixes"),
    extend_ignore: Optional[list[str]] = typer.Option(None, "--extend-ignore", metavar="RULE_CODE",
                                                      help="Also ignore these rule codes or prefixes"),
    config: Optional[list[str]] = typer.Option(
        None, "--config", metavar="CONFIG_OPTION",
        help="A config file to read [tool.dagguard] from instead of the nearest pyproject.toml, or a "
             "KEY = VALUE pair of [tool.dagguard] that overrides it (e.g. --config 'max-catchup-runs = 50')"),
    stdin_filename: Optional[Path] = typer.Option(
        None, "--stdin-filename", metavar="STDIN_FILENAME",
        help="The file name of standard input, for config matching and messages"),
    no_respect_gitignore: bool = typer.Option(False, "--no-respect-gitignore",
                                              help="Check files that .gitignore and .ignore files exclude"),
    force_exclude: bool = typer.Option(False, "--force-exclude",
                                       help="Apply exclude and ignore files to paths given explicitly too "
                                            "(as pre-commit passes them)"),
    statistics: bool = typer.Option(False, "--statistics", help="Show how many findings each rule has"),
    show_files: bool = typer.Option(False, "--show-files", help="List the files that would be checked, and exit"),
    show_settings: bool = typer.Option(False, "--show-settings",
                                       help="Show the settings that would be used, and exit"),
    now: Optional[str] = typer.Option(None, "--now", metavar="ISO8601",
                                      help="Fix 'now' for run-count estimates, for reproducible output"),
    exit_zero: bool = typer.Option(False, "--exit-zero", "-e", help="Exit 0 even when problems are found"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print the findings, but no summary"),
    silent: bool = typer.Option(False, "--silent", "-s",
                                help="Print nothing (the exit code still says whether there are findings)"),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", metavar="N",
                                       help="Check files in N processes (default: all cores; few files stay in one)"),
    fix: bool = typer.Option(False, "--fix", help="Apply fixes (safe ones; unsafe ones too with --unsafe-fixes)."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Also apply (and count) the fixes that change what runs."),
    diff: bool = typer.Option(False, "--diff", help="Print the diff --fix would write; write nothing (exit 1 when there is one)."),
    fix_only: bool = typer.Option(False, "--fix-only", help="Apply fixes and report only what was fixed (implies --fix)."),
    show_fixes: bool = typer.Option(False, "--show-fixes", help="List the fixes applied, per file."),
    exit_non_zero_on_fix: bool = typer.Option(False, "--exit-non-zero-on-fix", help="Exit 1 when any fix was applied, even if nothing is left."),
    add_noqa: bool = typer.Option(False, "--add-noqa", help="Add `# noqa: CODES` for every current finding."),
    no_cache: bool = typer.Option(False, "--no-cache", envvar="DAGGUARD_NO_CACHE",
                                  help="Check every file; do not read or write the cache [env: DAGGUARD_NO_CACHE]"),
    cache_dir: Optional[Path] = typer.Option(
        None, "--cache-dir", metavar="CACHE_DIR", envvar="DAGGUARD_CACHE_DIR",
        help="Keep results in this folder [env: DAGGUARD_CACHE_DIR] [default: .dagguard_cache "
             "beside pyproject.toml]"),
) -> None:
    """Check DAG files without importing or running them."""
    from dagguard import api
    from dagguard.config import command_line_selection, parse_now
    from dagguard.report import FORMATS, canonical_format

    try:
        output_format = canonical_format(output_format)
    except ValueError:
        raise fail(f"--output-format must be one of {', '.join(FORMATS)}, got {output_format!r}") from None
    targets = list(paths) if paths else [Path(".")]
    if jobs is not None and jobs < 1:
        raise fail(f"--jobs must be at least 1, got {jobs}")
    from_stdin = [str(p) for p in targets] == [api.STDIN] or (stdin_filename is not None and not paths)
    if api.STDIN in map(str, targets) and not from_stdin:
        raise fail("- (standard input) cannot be checked together with other paths")
    try:
        fixed_now = parse_now(now)
        config_file, overrides = api.split_config_options(config or [])
        anchors = ([stdin_filename] if stdin_filename else []) if from_stdin else targets
        settings = api.discover_settings(anchors, config_file, overrides).with_selection(command_line_selection(
            select, extend_select, ignore, extend_ignore)).with_overrides(
            respect_gitignore=False if no_respect_gitignore else None, force_exclude=force_exclude or None)
        if show_settings:
            sys.stdout.write(api.describe_settings(settings))
            raise typer.Exit(0)
        if show_files:
            files = [stdin_filename or Path(api.STDIN)] if from_stdin else api.files_to_check(targets, settings)
            sys.stdout.write("".join(f"{f if from_stdin else f.resolve()}\n" for f in files))
            raise typer.Exit(0)
        if fix or fix_only or diff or add_noqa:
            from dagguard.cli_fixes import FixOptions, run_fixes, run_stdin_fixes

            options = FixOptions(unsafe_fixes, diff, fix_only, show_fixes, exit_non_zero_on_fix, add_noqa, exit_zero)
            if from_stdin:
                raise typer.Exit(run_stdin_fixes(stdin_filename, settings, fixed_now, options, output_format))
            raise typer.Exit(run_fixes(targets, settings, fixed_now, options, output_format, _use_color()))
        if from_stdin:
            result = api.check_stdin(api.read_stdin(), stdin_filename, settings=settings, now=fixed_now)
        else:
            from dagguard.engine.cache import cache_directory

            cache = None if no_cache else cache_directory(cache_dir, settings)
            result = _check_with_progress(targets, settings, fixed_now, output_format, quiet or silent, jobs, cache)
        result = replace(result, unsafe_fixes=unsafe_fixes)
    except api.ConfigError as exc:
        raise fail(str(exc)) from None
    nothing_checked = bool(result.missing_paths) and result.files_checked == 0
    if not silent and not nothing_checked:  # "All checks passed" would be wrong when no path exists
        _write_report(result, output_format, output_file, statistics, quiet)
    print_warnings(result.warnings)
    for missing in result.missing_paths:
        typer.echo(f"dagguard: error: {missing}: no such file or directory", err=True)
    for error in result.internal_errors:
        typer.echo(f"dagguard: {error} (please report this bug)", err=True)
    if result.internal_errors or result.missing_paths:
        raise typer.Exit(code=2)
    raise typer.Exit(code=0 if exit_zero or not result.findings else 1)


def _check_with_progress(targets: list[Path], settings: "Settings", now: Optional["datetime.datetime"],
                         output_format: str, quiet: bool, jobs: Optional[int],
                         cache: Optional[Path]) -> "CheckResult":
    from dagguard import api
    from dagguard.progress import DelayedProgressBar, wants_progress
    from dagguard.report import HUMAN_FORMATS

    if not wants_progress(output_format in HUMAN_FORMATS, quiet):
        return api.check_paths(targets, settings=settings, now=now, jobs=jobs, cache_dir=cache)
    bar = DelayedProgressBar()
    try:
        return api.check_paths(targets, settings=settings, now=now, progress=bar, jobs=jobs, cache_dir=cache)
    finally:
        bar.close()


def _write_report(result: "CheckResult", output_format: str, output_file: Optional[Path], statistics: bool,
                  quiet: bool) -> None:
    from dagguard.report import HUMAN_FORMATS, formatter

    human = output_format in HUMAN_FORMATS
    color = output_file is None and human and _use_color()
    if statistics:
        from dagguard.report.statistics import format_statistics

        text = format_statistics(result, as_json=output_format == "json", summary=not quiet)
    elif human:
        text = formatter(output_format)(result, color, summary=not quiet)
    else:
        text = formatter(output_format)(result, color)
    if output_file is None:
        sys.stdout.write(text)
        return
    try:
        output_file.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise fail(f"--output-file {output_file}: cannot write it: {exc.strerror or exc}") from None


@app.command("dags")
def dags(
    paths: list[Path] = typer.Argument(None, help="Files or folders to list (default: the current folder)."),
    output_format: str = typer.Option("text", "--format", help="text or json."),
    config: Optional[list[str]] = typer.Option(
        None, "--config", metavar="CONFIG_OPTION",
        help="A config file to read [tool.dagguard] from instead of the nearest pyproject.toml, or a "
             "KEY = VALUE pair of [tool.dagguard] that overrides it, as for check"),
    unseen: bool = typer.Option(False, "--unseen", help="List instead the files that import airflow and look like DAG files but show no DAG, each with the likely reason."),
) -> None:
    """List every DAG the linter sees, with how it was found and its arguments as resolved."""
    import json

    from dagguard.api import ConfigError, check_paths, discover_settings, split_config_options
    from dagguard.config import RuleSelection
    from dagguard.engine.dag_listing import format_text, format_unseen

    if output_format not in ("text", "json"):
        raise fail(f"--format must be one of text, json, got {output_format!r}")
    targets = list(paths) if paths else [Path(".")]
    try:
        config_file, overrides = split_config_options(config or [])
        settings = discover_settings(targets, config_file, overrides)
        # Only DG000 runs: the listing comes from the model, not from any rule.
        result = check_paths(targets, settings=settings.with_selection(RuleSelection(select=("DG000",))))
    except ConfigError as exc:
        raise fail(str(exc)) from None
    if unseen:
        files = sorted(zip(result.files_without_dags, result.unseen_reasons))
        if output_format == "json":
            sys.stdout.write(json.dumps([{"path": path, "reason": reason} for path, reason in files], indent=2) + "\n")
        elif files:
            sys.stdout.write(format_unseen(files) + "\n")
        return
    listed = sorted(result.dags, key=lambda d: (d.path, d.line))
    if output_format == "json":
        sys.stdout.write(json.dumps([d.as_dict() for d in listed], indent=2) + "\n")
    elif listed:
        sys.stdout.write(format_text(listed) + "\n")


@app.command("rules", cls=RuffStyleCommand)
def list_rules() -> None:
    """List every rule: code, name, severity, whether it can be fixed, summary."""
    from dagguard.rule_info import RULE_INFO

    if _use_color():
        from rich.console import Console
        from rich.table import Table

        from rich import box

        # Codes and names stay whole on an 80-column terminal; only the summary wraps.
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        for header in ("code", "name", "severity", "fix"):
            table.add_column(header, no_wrap=True)
        table.add_column("summary", ratio=1, overflow="fold")
        for rule in RULE_INFO:
            table.add_row(rule.code, rule.name, rule.severity, "yes" if rule.fixable else "", rule.summary)
        Console().print(table)
        return
    for rule in RULE_INFO:
        fixable = "fixable" if rule.fixable else "-"
        typer.echo(f"{rule.code}\t{rule.name}\t{rule.severity}\t{fixable}\t{rule.summary}")


@app.command("rule", cls=RuffStyleCommand)
def show_rule(code: str = typer.Argument(..., metavar="CODE", help="A rule code, e.g. DG101, or its name")) -> None:
    """Print a rule's page: what it flags, why, bad and good examples, how to fix."""
    from dagguard.rule_info import RULE_INFO
    from dagguard.rules.pages import labelled_for_terminal, page_text

    wanted = code.strip()
    rule = next((r for r in RULE_INFO if wanted.upper() == r.code or wanted == r.name), None)
    if rule is None:
        raise fail(f"no rule {wanted!r}; `dagguard rules` lists them")
    text = page_text(rule.code)
    if text is None:
        raise fail(f"the page of {rule.code} is missing from this installation")
    if _use_color():
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(labelled_for_terminal(text)))
    else:
        sys.stdout.write(text)


@app.command(cls=RuffStyleCommand)
def server() -> None:
    """Run the language server (LSP over stdio): findings and fixes in the editor."""
    from dagguard.extras import MissingExtraError

    try:
        # Imported here so the linter commands never load pygls.
        from dagguard.server import run
        run()
    except MissingExtraError as exc:
        raise fail(str(exc)) from None


# --- runtime commands (doctor, ledger) -------------------------------------------------------


@app.command(cls=RuffStyleCommand)
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
    from dagguard.extras import MissingExtraError

    try:
        # Imported here so the linter commands never load SQLAlchemy or the doctor package.
        from dagguard import doctor as api
    except MissingExtraError as exc:
        raise fail(str(exc)) from None

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


@app.command(cls=RuffStyleCommand)
def ledger(
    conn: str = typer.Option(..., "--conn", metavar="URL",
                             help="Database holding dagguard_write_log: sqlite:///f.db, duckdb:///f.duckdb "
                                  "or postgresql://user@host/db (opened read-only where the driver allows), "
                                  "or a lake of Delta tables, delta:///path/lake, or an Iceberg catalog, "
                                  "iceberg+sqlite:///catalog.db?warehouse=file:///path."),
    table: Optional[str] = typer.Option(None, "--table", help="Only writes into this target table."),
    output_format: str = typer.Option("text", "--format", help="text or json."),
    gaps: bool = typer.Option(False, "--gaps", help="List instead the intervals of a schedule that no write "
                                                    "covers, per table; exit 1 when one is missing."),
    schedule: Optional[str] = typer.Option(None, "--schedule", metavar="SCHEDULE",
                                           help="--gaps: a cron expression, a preset (@daily) or an ISO 8601 "
                                                "duration (PT6H)."),
    start: Optional[str] = typer.Option(None, "--start", metavar="ISO8601",
                                        help="--gaps: the first interval starts at the first fire time from here."),
    end: Optional[str] = typer.Option(None, "--end", metavar="ISO8601",
                                      help="--gaps: the last interval starts at or before this (as a DAG's "
                                           "end_date). Default: the last interval over by now."),
    now: Optional[str] = typer.Option(None, "--now", metavar="ISO8601",
                                      help="--gaps: fix 'now', for reproducible output."),
    dag_file: Optional[Path] = typer.Option(None, "--dag-file", metavar="PATH",
                                            help="--gaps: read the schedule and dates of --dag-id from this "
                                                 "file (never imported)."),
    dag_id: Optional[str] = typer.Option(None, "--dag-id", metavar="DAG_ID",
                                         help="--gaps: the DAG of --dag-file; its tables are those it wrote."),
) -> None:
    """List idempotent writes; exit 1 if an interval was written twice with different checksums
    (with --gaps: the intervals of a schedule that no write covers; exit 1 if one is missing)."""
    # Imported here so the linter commands never load the runtime helpers.
    from dagguard.idempotent import IdempotentWriteError, read_ledger
    from dagguard.idempotent.ledger_render import FORMATS, exit_code, render

    if output_format not in FORMATS:
        raise fail(f"--format must be one of {', '.join(FORMATS)}")
    gap_options = {"--schedule": schedule, "--start": start, "--end": end, "--now": now,
                   "--dag-file": dag_file, "--dag-id": dag_id}
    if gaps:
        raise typer.Exit(_ledger_gaps(conn, table, output_format, schedule, start, end, now, dag_file, dag_id))
    if any(value is not None for value in gap_options.values()):
        raise fail(f"{next(k for k, v in gap_options.items() if v is not None)} is an option of --gaps")
    try:
        report = read_ledger(conn, table=table)
    except IdempotentWriteError as exc:
        raise fail(str(exc)) from None
    typer.echo(render(report, output_format), nl=False)
    raise typer.Exit(exit_code(report))


def _ledger_gaps(conn: str, table: Optional[str], output_format: str, schedule: Optional[str],
                 start: Optional[str], end: Optional[str], now: Optional[str], dag_file: Optional[Path],
                 dag_id: Optional[str]) -> int:
    from dagguard.idempotent import IdempotentWriteError
    from dagguard.idempotent.ledger_gaps import gaps_from_options
    from dagguard.idempotent.ledger_gaps_render import exit_code, render

    try:
        report = gaps_from_options(conn, schedule=schedule, start=start, end=end, now=now, table=table,
                                   dag_file=dag_file, dag_id=dag_id)
    except IdempotentWriteError as exc:
        raise fail(str(exc)) from None
    typer.echo(render(report, output_format), nl=False)
    return exit_code(report)


def main() -> None:
    """Console-script entry point."""
    app()
