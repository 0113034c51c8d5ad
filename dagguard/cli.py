"""The `dagguard` command: a thin typer layer that parses options, calls the API, prints, exits.

Exit codes follow ruff: 0 clean, 1 findings, 2 usage or configuration error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Stops Apache Airflow pipelines from flooding schedulers and duplicating data.",
    pretty_exceptions_enable=False,
)


def fail(message: str) -> "typer.Exit":
    """Print one line on stderr and return the exit for a usage/config error."""
    typer.echo(f"dagguard: error: {message}", err=True)
    return typer.Exit(code=2)


# --- linter commands -------------------------------------------------------------------------


# --- runtime commands (doctor, ledger) -------------------------------------------------------


@app.callback()
def _command_group() -> None:
    # Typer runs a lone command without its name; a callback keeps `dagguard doctor` a
    # subcommand whichever commands are registered. (Lead: move to the top if you prefer.)
    pass


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


def main() -> None:
    """Console-script entry point."""
    app()
