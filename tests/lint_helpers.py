"""Helpers for linter tests: check a snippet as a file on disk, through the public API."""

from __future__ import annotations

import datetime as dt
import textwrap
from pathlib import Path

from dagguard.api import check_paths
from dagguard.config import Settings
from dagguard.engine.findings import Finding

NOW = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)


def lint(tmp_path: Path, code: str, name: str = "dag.py", **settings) -> list[Finding]:
    """Write `code` to a file in tmp_path and return the findings of checking it."""
    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(textwrap.dedent(code), encoding="utf-8")
    result = check_paths([target], settings=Settings(config_path=tmp_path / "pyproject.toml", **settings),
                         now=NOW)
    return list(result.findings)


def codes(findings: list[Finding]) -> list[str]:
    return [f.code for f in findings]
