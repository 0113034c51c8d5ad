"""The public API: what the CLI, pre-commit and tests call."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Iterable, Optional, Union

from dagguard.config import ConfigError, Settings, discover_settings
from dagguard.engine.findings import Finding
from dagguard.engine.runner import CheckResult
from dagguard.engine import runner
from dagguard.engine.deep_stack import run_deep
from dagguard.engine import fixes
from dagguard.engine.fixes import FileFix, FixRun

__all__ = ["CheckResult", "ConfigError", "Finding", "Settings", "check_paths", "check_source", "discover_settings",
           "add_noqa", "fix_paths", "fix_source"]


STDIN = "-"   # the path that means "read the file from standard input"


def read_stdin() -> bytes:
    """The file given on standard input, as bytes (its encoding is read like a file's)."""
    return sys.stdin.buffer.read()


def _now(now: Optional[dt.datetime]) -> dt.datetime:
    if now is None:
        return dt.datetime.now(dt.timezone.utc)
    return now if now.tzinfo else now.replace(tzinfo=dt.timezone.utc)


def check_paths(paths: Iterable[Union[str, Path]], *, settings: Optional[Settings] = None,
                config: Optional[Path] = None, now: Optional[dt.datetime] = None) -> CheckResult:
    """Check every Python file under `paths`; settings come from pyproject.toml unless given.

    Raises ConfigError for a bad configuration or a path that does not exist.
    """
    path_list = [Path(p) for p in paths]
    if settings is None:
        settings = discover_settings(path_list, config)
    return runner.check_paths(path_list, settings, _now(now))


def check_source(source: Union[str, bytes], path: Union[str, Path] = "<string>.py", *,
                 settings: Optional[Settings] = None, now: Optional[dt.datetime] = None) -> list[Finding]:
    """Check one file's contents (per-file rules only) and return its findings."""
    result = run_deep(runner.check_source, source, Path(path), settings or Settings(), _now(now), str(path))
    return sorted(result.findings, key=lambda f: (f.line, f.column, f.code))


def fix_paths(paths: Iterable[Union[str, Path]], *, unsafe_fixes: bool = False, write: bool = True,
              settings: Optional[Settings] = None, config: Optional[Path] = None,
              now: Optional[dt.datetime] = None) -> FixRun:
    """Apply the fixes of every finding under `paths` (safe ones, and unsafe ones if asked);
    write the files that changed unless `write` is false. Returns what is left and what changed."""
    path_list = [Path(p) for p in paths]
    if settings is None:
        settings = discover_settings(path_list, config)
    return fixes.fix_paths(path_list, settings, _now(now), unsafe_fixes=unsafe_fixes, write=write)


def fix_source(source: Union[str, bytes], path: Union[str, Path] = "<string>.py", *, unsafe_fixes: bool = False,
               settings: Optional[Settings] = None, now: Optional[dt.datetime] = None) -> FileFix:
    """Fix one file's contents (per-file rules only); nothing is written."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    return run_deep(fixes.fix_source, data, Path(path), settings or Settings(), _now(now), unsafe_fixes, str(path))


def add_noqa(paths: Iterable[Union[str, Path]], *, settings: Optional[Settings] = None,
             config: Optional[Path] = None, now: Optional[dt.datetime] = None) -> int:
    """Add `# noqa: CODES` for every current finding under `paths`; returns the lines changed."""
    from dagguard.engine.add_noqa import add_noqa as add

    path_list = [Path(p) for p in paths]
    if settings is None:
        settings = discover_settings(path_list, config)
    return add(path_list, settings, _now(now))   # check_paths runs each file on the deep stack
