"""The public API: what the CLI, pre-commit and tests call."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Iterable, Optional, Union

from dagguard.config import ConfigError, Settings, discover_settings
from dagguard.engine.findings import Finding
from dagguard.engine.runner import CheckResult
from dagguard.engine import runner
from dagguard.engine.deep_stack import run_deep

__all__ = ["CheckResult", "ConfigError", "Finding", "Settings", "check_paths", "check_source", "discover_settings"]


def _now(now: Optional[dt.datetime]) -> dt.datetime:
    if now is None:
        return dt.datetime.now(dt.timezone.utc)
    return now if now.tzinfo else now.replace(tzinfo=dt.timezone.utc)


def check_paths(paths: Iterable[Union[str, Path]], *, settings: Optional[Settings] = None,
                config: Optional[Path] = None, now: Optional[dt.datetime] = None,
                jobs: Optional[int] = None) -> CheckResult:
    """Check every Python file under `paths`; settings come from pyproject.toml unless given.

    `jobs` processes check the files when there are enough of them (default: all cores).

    Raises ConfigError for a bad configuration or a path that does not exist.
    """
    path_list = [Path(p) for p in paths]
    if settings is None:
        settings = discover_settings(path_list, config)
    return runner.check_paths(path_list, settings, _now(now), jobs)


def check_source(source: Union[str, bytes], path: Union[str, Path] = "<string>.py", *,
                 settings: Optional[Settings] = None, now: Optional[dt.datetime] = None) -> list[Finding]:
    """Check one file's contents (per-file rules only) and return its findings."""
    result = run_deep(runner.check_source, source, Path(path), settings or Settings(), _now(now), str(path))
    return sorted(result.findings, key=lambda f: (f.line, f.column, f.code))
