"""The public API: what the CLI, pre-commit and tests call."""

from __future__ import annotations

import datetime as dt
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Optional, Union

from dagguard.config import ConfigError, Settings, describe, discover_settings, split_config_options
from dagguard.engine import run
from dagguard.engine.cache import ResultCache
from dagguard.engine.findings import Finding
from dagguard.engine.results import CheckResult, display_path
from dagguard.engine.files import discover_files, path_filter
from dagguard.engine.selection import enabled_codes

if TYPE_CHECKING:
    from dagguard.engine.fixes import FileFix, FixRun
    from dagguard.engine.results import FileResult
    from dagguard.model.project.project import ProjectIndex

# The checker (engine/runner.py, engine/fixes.py: libcst and the rules) is imported by the
# functions that check: a run answered by the cache never needs it.

__all__ = ["CheckResult", "ConfigError", "Finding", "Settings", "check_paths", "check_source", "check_stdin",
           "describe_settings", "discover_settings", "files_to_check", "read_stdin", "split_config_options",
           "add_noqa", "check_buffer", "fix_paths", "fix_source", "fix_stdin", "stdin_excluded"]

STDIN = "-"  # the path that means standard input, as in ruff


def _now(now: Optional[dt.datetime]) -> dt.datetime:
    if now is None:
        return dt.datetime.now(dt.timezone.utc)
    return now if now.tzinfo else now.replace(tzinfo=dt.timezone.utc)


def check_paths(paths: Iterable[Union[str, Path]], *, settings: Optional[Settings] = None,
                config: Optional[Path] = None, now: Optional[dt.datetime] = None,
                progress: Optional[run.Progress] = None, jobs: Optional[int] = None,
                cache_dir: Optional[Path] = None) -> CheckResult:
    """Check every Python file under `paths`; settings come from pyproject.toml unless given.
    `progress` is called with (files checked, files to check) after each file.

    `jobs` processes check the files when there are enough of them (default: all cores).
    With `cache_dir`, results are kept there and reused while their file, the project modules
    it was resolved through, the settings, dagguard and the day of `now` are unchanged.

    Paths that do not exist are listed in the result's `missing_paths`. Raises ConfigError for a
    bad configuration.
    """
    path_list = [Path(p) for p in paths]
    if settings is None:
        settings = discover_settings(path_list, config)
    # As ruff does, a path that does not exist is reported and the others are still checked.
    present = [p for p in path_list if os.path.lexists(p)]
    missing = tuple(str(p) for p in path_list if not os.path.lexists(p))
    moment = _now(now)
    if not present:
        return replace(run.combine([], settings), missing_paths=missing)
    cache = ResultCache(cache_dir, settings, moment) if cache_dir is not None else None
    result = run.check_paths(present, settings, moment, progress, jobs, cache)
    return replace(result, missing_paths=missing) if missing else result


def files_to_check(paths: Iterable[Union[str, Path]], settings: Settings) -> list[Path]:
    """The files check_paths would check (`--show-files`)."""
    return list(discover_files([Path(p) for p in paths if os.path.lexists(p)], settings).files)


def describe_settings(settings: Settings) -> str:
    """The resolved settings and the rules they enable (`--show-settings`)."""
    return describe(settings, enabled_codes(settings))


def check_source(source: Union[str, bytes], path: Union[str, Path] = "<string>.py", *,
                 settings: Optional[Settings] = None, now: Optional[dt.datetime] = None) -> list[Finding]:
    """Check one file's contents (per-file rules only) and return its findings."""
    from dagguard.engine import runner
    from dagguard.engine.deep_stack import run_deep

    result = run_deep(runner.check_source, source, Path(path), settings or Settings(), _now(now), str(path))
    return sorted(result.findings, key=lambda f: (f.line, f.column, f.code))


def read_stdin() -> bytes:
    """Standard input as one file's bytes: the one place `check -` (and a later `--fix -`) reads it."""
    return sys.stdin.buffer.read()


def stdin_settings(filename: Optional[Path], config: Optional[Path] = None) -> Settings:
    """Settings for stdin: found from the folder `--stdin-filename` names, else the working one."""
    return discover_settings([filename] if filename is not None else [], config)


def check_stdin(source: Union[str, bytes], filename: Optional[Union[str, Path]] = None, *,
                settings: Optional[Settings] = None, now: Optional[dt.datetime] = None) -> CheckResult:
    """Check one file's contents as if it were at `filename` (config matching, messages), with
    every rule, as check_paths would check that one file."""
    path = Path(filename) if filename is not None else None
    if settings is None:
        settings = stdin_settings(path)
    checked = check_buffer(source, path, settings=settings, now=now)
    if checked is None:
        return run.combine([], settings)  # excluded: nothing to check, as in ruff
    shown = display_path(path) if path is not None else STDIN
    text = source if isinstance(source, str) else source.decode("utf-8", errors="replace")
    return replace(run.combine([checked], settings), sources={shown: text})


def check_buffer(source: Union[str, bytes], path: Optional[Path], *, settings: Settings,
                 now: Optional[dt.datetime] = None, project: Optional["ProjectIndex"] = None) -> Optional["FileResult"]:
    """One file's contents checked as if at `path`, as check_stdin checks them, before the
    cross-file rules: its FileResult (None when the config excludes the path and
    force-exclude is on). `project` is the index to resolve factories with (the language
    server's sees the open buffers); by default the one `check` would use."""
    if stdin_excluded(path, settings):
        return None
    from dagguard.engine import runner
    from dagguard.engine.deep_stack import run_deep

    shown = display_path(path) if path is not None else STDIN
    return run_deep(runner.check_source, source, path or Path(STDIN), settings, _now(now), shown,
                    project if project is not None else _stdin_project(path, settings))


def fix_stdin(source: Union[str, bytes], filename: Optional[Union[str, Path]] = None, *, unsafe_fixes: bool = False,
              settings: Optional[Settings] = None, now: Optional[dt.datetime] = None,
              project: Optional["ProjectIndex"] = None) -> FixRun:
    """Fix one file's contents as if it were at `filename`, as fix_paths would fix that file
    (every rule, the project's factories, or those `project` resolves); its one FileFix holds
    the fixed text. Nothing is written."""
    path = Path(filename) if filename is not None else None
    if settings is None:
        settings = stdin_settings(path)
    from dagguard.engine import fixes
    from dagguard.engine.deep_stack import run_deep
    from dagguard.engine.fixes import FileFix, FixRun
    from dagguard.engine.results import FileResult

    data = source.encode("utf-8") if isinstance(source, str) else source
    if stdin_excluded(path, settings):   # ruff hands the source back unchanged and reports nothing
        untouched = FileFix(path or Path(STDIN), data, data, (), (), FileResult(path or Path(STDIN), ()))
        return FixRun(replace(run.combine([], settings), unsafe_fixes=unsafe_fixes), (untouched,))
    shown = display_path(path) if path is not None else STDIN
    fixed = run_deep(fixes.fix_source, data, path or Path(STDIN), settings, _now(now), unsafe_fixes, shown,
                     project if project is not None else _stdin_project(path, settings))
    text = fixes.decoded(fixed.fixed)
    result = replace(run.combine([fixed.result], settings), sources={shown: text}, unsafe_fixes=unsafe_fixes,
                     fixed=len(fixed.applied), after_fixes=True)
    return FixRun(result, (fixed,))


def stdin_excluded(path: Optional[Path], settings: Settings) -> bool:
    """--force-exclude and a --stdin-filename the config excludes: stdin is neither checked nor fixed."""
    return path is not None and settings.force_exclude and path_filter(path, settings)(path, False)


def _stdin_project(path: Optional[Path], settings: Settings) -> "ProjectIndex":
    """The project index `check` would use for the file stdin stands for."""
    from dagguard.model.project.project import ProjectIndex, project_layout   # libcst: only when checking

    return ProjectIndex(*project_layout([path] if path is not None else [], settings.config_path, settings.src,
                                        settings.packages))


def fix_paths(paths: Iterable[Union[str, Path]], *, unsafe_fixes: bool = False, write: bool = True,
              settings: Optional[Settings] = None, config: Optional[Path] = None,
              now: Optional[dt.datetime] = None) -> FixRun:
    """Apply the fixes of every finding under `paths` (safe ones, and unsafe ones if asked);
    write the files that changed unless `write` is false. Returns what is left and what changed."""
    from dagguard.engine import fixes

    path_list = [Path(p) for p in paths]
    if settings is None:
        settings = discover_settings(path_list, config)
    return fixes.fix_paths(path_list, settings, _now(now), unsafe_fixes=unsafe_fixes, write=write)


def fix_source(source: Union[str, bytes], path: Union[str, Path] = "<string>.py", *, unsafe_fixes: bool = False,
               settings: Optional[Settings] = None, now: Optional[dt.datetime] = None) -> FileFix:
    """Fix one file's contents (per-file rules only); nothing is written."""
    from dagguard.engine import fixes
    from dagguard.engine.deep_stack import run_deep

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
