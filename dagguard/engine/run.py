"""A run over many files: find them, take what the cache still holds, check the rest, then run
the cross-file rules on every file's facts and gather one result.

Nothing here parses: the checker (runner.py, libcst and the rules) is imported only when some
file is not answered by the cache, so a warm run with nothing changed never loads it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from dagguard.config import Settings
from dagguard.engine.cache import ResultCache
from dagguard.engine.files import discover_files
from dagguard.engine.findings import Finding
from dagguard.engine.noqa import is_suppressed
from dagguard.engine.results import CheckResult, FileResult, display_path, real_cwd, syntax_finding
from dagguard.engine.selection import ignored_for_file, is_enabled
from dagguard.engine.unseen import unseen_files
from dagguard.engine.yaml_check import is_yaml_path
from dagguard.rules import project_rules

Progress = Callable[[int, int], None]  # called with (files checked, files to check)


def check_paths(paths: Iterable[Path], settings: Settings, now: dt.datetime,
                progress: Optional[Progress] = None, jobs: Optional[int] = None,
                cache: Optional[ResultCache] = None) -> CheckResult:
    """Check every Python file under `paths`, in `jobs` processes (default: all cores) when they
    pay; with a `cache`, files whose stored result still holds are not checked again."""
    paths = list(paths)
    discovery = discover_files(paths, settings)
    files = discovery.files
    results: list[Optional[FileResult]] = [None] * len(files)
    digests: list[Optional[str]] = [None] * len(files)
    done = 0
    if cache is not None:
        digests, results = cache.lookup_many(files)
        done = sum(1 for result in results if result is not None)
        if progress is not None and done:
            progress(done, len(files))
    misses = [index for index, result in enumerate(results) if result is None]
    if misses:
        from dagguard.engine.runner import check_files   # libcst and the rules: only for a miss

        checked = check_files([files[index] for index in misses], paths, settings, now, jobs)
        for index, result in zip(misses, checked):
            results[index] = result
            digest = digests[index]
            if cache is not None and digest is not None:
                cache.store(files[index], digest, result, save=False)
            done += 1
            if progress is not None:
                progress(done, len(files))
    if cache is not None:
        cache.save()   # one write of the pack, only if an entry changed
    gathered = [result for result in results if result is not None]
    combined = combine(gathered + problem_results(discovery.problems, settings), settings)
    if cache is not None and cache.problem is not None:
        return replace(combined, warnings=combined.warnings + (cache.problem,))
    return combined


def problem_results(problems: Iterable[tuple[Path, str]], settings: Settings) -> list[FileResult]:
    """What discovery could not read (an unreadable folder ...), each as a DG000 finding."""
    return [FileResult(path, (syntax_finding(display_path(path), 1, 1, problem),))
            for path, problem in problems if is_enabled("DG000", settings)]


def _project_findings(results: Sequence[FileResult],
                      settings: Settings) -> tuple[list[Finding], set[tuple[Path, int, int]]]:
    """Run the cross-file rules; returns their findings and where the DAGs they flagged start."""
    by_path = {result.path: result for result in results}
    sites = [site for result in results for site in result.dag_sites]
    findings: list[Finding] = []
    flagged: set[tuple[Path, int, int]] = set()
    for rule in project_rules():
        if not is_enabled(rule.code, settings):
            continue
        for site, message, help_text in rule.check_project(sites):
            if ignored_for_file(rule.code, site.path, settings):
                continue
            if is_suppressed(by_path[site.path].noqa, rule.code, (site.line,)):
                continue
            findings.append(Finding(
                path=display_path(site.path), line=site.line, column=site.column, code=rule.code,
                rule=rule.name, severity=rule.severity, end_line=site.end_line,
                end_column=site.end_column, message=message, help=help_text, dag_id=site.dag_id,
            ))
            flagged.add((site.path, site.line, site.column))
    return findings, flagged


def combine(results: Sequence[FileResult], settings: Settings) -> CheckResult:
    """Run the cross-file rules on the checked files and gather everything into one result."""
    project, flagged = _project_findings(results, settings)
    findings = sorted([f for r in results for f in r.findings] + project,
                      key=lambda f: (f.path, f.line, f.column, f.code))
    dag_count = sum(r.dag_count for r in results)
    flagged |= {(r.path, line, column) for r in results for line, column in r.flagged_dags}
    clean = max(dag_count - len(flagged), 0)
    errors = tuple(e for r in results for e in r.internal_errors)
    cwd = real_cwd()
    # A module other files import, or resolve factories or constants through, is their library,
    # not a DAG file whose DAGs went unseen (engine/unseen.py).
    unseen = unseen_files(results)
    warnings = tuple(w for r in results for w in r.warnings)
    # A YAML file that is not dag-factory's (a CI config) was looked at, not checked.
    checked = sum(1 for r in results if r.dag_count or r.findings or not is_yaml_path(r.path))
    return CheckResult(tuple(findings), checked, dag_count, clean, errors, warnings=warnings,
                       files_without_dags=tuple(display_path(r.path, cwd) for r, _ in unseen),
                       unseen_reasons=tuple(reason for _, reason in unseen),
                       dags=tuple(d for r in results for d in r.dags))
