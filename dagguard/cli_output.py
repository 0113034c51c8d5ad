"""What every command prints beside its results: the run's warnings, on stderr."""

from __future__ import annotations

from typing import Iterable

import typer


def print_warnings(warnings: Iterable[str]) -> None:
    for warning in warnings:
        typer.echo(f"dagguard: warning: {warning}", err=True)
