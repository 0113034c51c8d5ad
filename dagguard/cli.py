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


def main() -> None:
    """Console-script entry point."""
    app()
