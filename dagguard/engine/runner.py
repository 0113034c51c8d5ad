"""Check files: parse once, build the model once, run every enabled rule on it, locate only
the reported nodes, then apply noqa and per-file-ignores."""

from __future__ import annotations

import ast
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional, Sequence, Union

import libcst as cst

from dagguard.config import Settings
from dagguard.engine.deep_stack import run_deep
from dagguard.engine.files import discover_files
from dagguard.engine.findings import Finding
from dagguard.engine.noqa import is_suppressed, noqa_warnings, parse_noqa
from dagguard.engine.positions import Span, locate_in_regions
from dagguard.engine.selection import ignored_for_file, is_enabled, is_ignored
from dagguard.model.branches import branch_paths
from dagguard.model.dags import DagModel, build_file_model
from dagguard.model.ownership import dag_regions
from dagguard.rules import ALL_RULES, RULES_BY_CODE, SYNTAX_ERROR, ProjectRule, Rule
from dagguard.rules.base import DagSite, Fix, Report, RuleContext

MAX_FILE_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class FileResult:
    path: Path
    findings: tuple[Finding, ...]
    dag_sites: tuple[DagSite, ...] = ()
    dag_count: int = 0
    # Where the DAGs with findings start (line, column): a cross-file rule may flag them too,
    # and a DAG counts once.
    flagged_dags: frozenset[tuple[int, int]] = frozenset()
    noqa: Mapping[int, Optional[frozenset[str]]] = field(default_factory=dict)
    internal_errors: tuple[str, ...] = ()
    # Kept only when asked (check_source(keep_fixes=True)): the parsed tree the fixes' nodes
    # belong to, and each fixable finding with its fix.
    module: Optional[cst.Module] = field(default=None, compare=False, repr=False)
    fixes: tuple[tuple[Finding, Fix], ...] = field(default=(), compare=False, repr=False)
    warnings: tuple[str, ...] = ()     # `path:line: message` lines, e.g. a noqa naming no rule


@dataclass(frozen=True)
class CheckResult:
    findings: tuple[Finding, ...]
    files_checked: int
    dag_count: int
    clean_dag_count: int
    internal_errors: tuple[str, ...] = ()
    # Contents of files that are not on disk (stdin), by shown path, for reporters that quote source.
    sources: Mapping[str, str] = field(default_factory=dict)
    missing_paths: tuple[str, ...] = ()  # given paths that do not exist (exit 2, the others checked)
    unsafe_fixes: bool = False         # are unsafe fixes applicable in this run (--unsafe-fixes)?
    warnings: tuple[str, ...] = ()
    fixed: int = 0                     # findings fixed by --fix before these were found

    @property
    def files_with_findings(self) -> int:
        return len({f.path for f in self.findings})


def display_path(path: Path) -> str:
    """The path as ruff shows it: relative to the working directory when below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
        return str(path)


def _syntax_finding(shown: str, line: int, column: int, message: str) -> Finding:
    rule = SYNTAX_ERROR
    return Finding(path=shown, line=line, column=column, code=rule.code, rule=rule.name,
                   severity=rule.severity, end_line=line, end_column=column, message=message)


def _parse(source: Union[bytes, str], shown: str) -> Union[cst.Module, Finding]:
    if len(source) > MAX_FILE_BYTES:
        return _syntax_finding(shown, 1, 1, f"file is too large to check ({len(source) // 1024 // 1024} MiB, "
                                            f"limit {MAX_FILE_BYTES // 1024 // 1024} MiB)")
    try:
        return cst.parse_module(source)
    except (RecursionError, MemoryError):
        return _syntax_finding(shown, 1, 1, "cannot parse: the file is nested too deeply")
    except Exception as exc:  # ParserSyntaxError, and a few other types on binary or odd input
        libcst_error = exc
    # CPython's message and position are the ones users know; libcst's are a fallback for
    # syntax CPython accepts but libcst does not.
    cpython = _cpython_syntax_error(source)
    if cpython is not None:
        line, column, message = cpython
        return _syntax_finding(shown, line, column, f"SyntaxError: {message}")
    if isinstance(libcst_error, cst.ParserSyntaxError):
        message = " ".join(libcst_error.message.split()) or "invalid syntax"
        return _syntax_finding(shown, max(libcst_error.raw_line, 1), libcst_error.raw_column + 1,
                               f"cannot parse: {message}")
    return _syntax_finding(shown, 1, 1, f"cannot parse: {libcst_error}")


def _cpython_syntax_error(source: Union[bytes, str]) -> Optional[tuple[int, int, str]]:
    try:
        compile(source, "<dag file>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        return max(exc.lineno or 1, 1), max(exc.offset or 1, 1), exc.msg
    except (ValueError, UnicodeDecodeError) as exc:  # null bytes, undecodable text
        return 1, 1, str(exc)
    except (RecursionError, MemoryError):
        return 1, 1, "the file is nested too deeply"
    return None


def _source_text(source: Union[bytes, str], module: cst.Module) -> str:
    if isinstance(source, str):
        return source
    return source.decode(module.encoding, errors="replace")


def _is_active(rule: Rule, path: Path, settings: Settings) -> bool:
    return is_enabled(rule.code, settings) and not ignored_for_file(rule.code, path, settings)


def check_source(source: Union[bytes, str], path: Path, settings: Settings, now: dt.datetime,
                 shown: Optional[str] = None, keep_fixes: bool = False) -> FileResult:
    """Check one file's contents. Never raises for bad input: that becomes a DG000 finding."""
    shown = shown or display_path(path)
    parsed = _parse(source, shown)
    if isinstance(parsed, Finding):
        keep = (not ignored_for_file(parsed.code, path, settings)
                and (is_enabled(parsed.code, settings) or not is_ignored(parsed.code, settings)))
        return FileResult(path, (parsed,) if keep else ())
    module = parsed
    try:
        model = build_file_model(module)
    except RecursionError:
        return FileResult(path, (_syntax_finding(shown, 1, 1, "cannot check: the file is nested too deeply"),))
    context = RuleContext(path=path, settings=settings, now=now)
    reports: list[tuple[Rule, Report]] = []
    errors: list[str] = []
    for rule in ALL_RULES:
        if isinstance(rule, ProjectRule) or rule is SYNTAX_ERROR or not _is_active(rule, path, settings):
            continue
        try:
            reports.extend((rule, report) for report in rule.check(model, context))
        except Exception as exc:  # a rule bug must not stop the other files
            errors.append(f"internal error in {rule.code} on {shown}: {type(exc).__name__}: {exc}")

    dag_nodes = [dag.report_node for dag in model.dags]
    # A finding that does not name its DAG gets the one whose code holds its node.
    regions = dag_regions(model) if any(r.dag is None for _, r in reports) else {}
    try:
        spans, owners = locate_in_regions(module, [r.node for _, r in reports] + dag_nodes, regions) \
            if (reports or dag_nodes) else ({}, {})
    except RecursionError:
        return FileResult(path, (_syntax_finding(shown, 1, 1, "cannot check: the file is nested too deeply"),))
    # Findings need it now; DAG sites need it later, for the cross-file rules.
    text = _source_text(source, module)
    noqa = parse_noqa(text)
    warnings = tuple(f"{shown}:{line}: {message}" for line, message in noqa_warnings(text, RULES_BY_CODE)) \
        if noqa else ()

    findings: list[Finding] = []
    fixes: list[tuple[Finding, Fix]] = []
    flagged_dags: set[tuple[int, int]] = set()
    for rule, report in reports:
        span = spans.get(id(report.node))
        if span is None:
            errors.append(f"internal error in {rule.code} on {shown}: could not locate the reported node")
            continue
        lines = (span.line,)
        if report.dag is not None and id(report.dag.report_node) in spans:
            lines += (spans[id(report.dag.report_node)].line,)
        if is_suppressed(noqa, rule.code, lines):
            continue
        owner = report.dag or owners.get(id(report.node))
        # A DAG with a finding on one of its tasks is not clean either.
        dag_span = spans.get(id(owner.report_node)) if owner is not None else None
        if dag_span is not None:
            flagged_dags.add((dag_span.line, dag_span.column))
        finding = _finding(rule, report, span, shown, owner)
        findings.append(finding)
        if report.fix is not None:
            fixes.append((finding, report.fix))

    located = [(dag, span) for dag in model.dags
               if dag.dag_id is not None and (span := spans.get(id(dag.report_node))) is not None]
    ids = [dag.dag_id for dag, _ in located]
    # Only a dag_id defined twice in this file needs the walk that finds its if/else branches.
    paths = (branch_paths(model.module, (dag.report_node for dag, _ in located))
             if len(set(ids)) < len(ids) else {})
    sites = tuple(
        DagSite(dag_id=dag.dag_id, path=path, line=span.line, column=span.column,
                end_line=span.end_line, end_column=span.end_column,
                branches=paths.get(id(dag.report_node), ()))
        for dag, span in located
    )
    return FileResult(path, tuple(findings), sites, len(model.dags), frozenset(flagged_dags), noqa, tuple(errors),
                      module if keep_fixes else None, tuple(fixes) if keep_fixes else (), warnings)


def _finding(rule: Rule, report: Report, span: Span, shown: str, dag: Optional[DagModel]) -> Finding:
    return Finding(
        path=shown, line=span.line, column=span.column, code=rule.code, rule=rule.name,
        severity=report.severity or rule.severity, end_line=span.end_line, end_column=span.end_column,
        message=report.message, help=report.help,
        dag_id=dag.dag_id if dag is not None else None, fixable=report.fix is not None,
        fix_safety=report.fix.safety if report.fix else None,
        fix_description=report.fix.description if report.fix else None,
    )


def check_file(path: Path, settings: Settings, now: dt.datetime) -> FileResult:
    """Read and check one file; an unreadable file is a DG000 finding."""
    shown = display_path(path)
    try:
        source = path.read_bytes()
    except OSError as exc:
        return FileResult(path, (_syntax_finding(shown, 1, 1, f"cannot read the file: {exc.strerror or exc}"),))
    return check_source(source, path, settings, now, shown)


def _project_findings(results: Sequence[FileResult],
                      settings: Settings) -> tuple[list[Finding], set[tuple[Path, int, int]]]:
    """Run the cross-file rules; returns their findings and where the DAGs they flagged start."""
    by_path = {result.path: result for result in results}
    sites = [site for result in results for site in result.dag_sites]
    findings: list[Finding] = []
    flagged: set[tuple[Path, int, int]] = set()
    for rule in ALL_RULES:
        if not isinstance(rule, ProjectRule) or not is_enabled(rule.code, settings):
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


Progress = Callable[[int, int], None]  # called with (files checked, files to check)


def check_paths(paths: Iterable[Path], settings: Settings, now: dt.datetime,
                progress: Optional[Progress] = None) -> CheckResult:
    """Check every Python file under `paths`."""
    files = discover_files(list(paths), settings)
    results = []
    for path in files:
        results.append(run_deep(check_file, path, settings, now))
        if progress is not None:
            progress(len(results), len(files))
    return combine(results, settings)


def combine(results: Sequence[FileResult], settings: Settings) -> CheckResult:
    """Run the cross-file rules on the checked files and gather everything into one result."""
    project, flagged = _project_findings(results, settings)
    findings = sorted([f for r in results for f in r.findings] + project,
                      key=lambda f: (f.path, f.line, f.column, f.code))
    dag_count = sum(r.dag_count for r in results)
    flagged |= {(r.path, line, column) for r in results for line, column in r.flagged_dags}
    clean = max(dag_count - len(flagged), 0)
    errors = tuple(e for r in results for e in r.internal_errors)
    warnings = tuple(w for r in results for w in r.warnings)
    return CheckResult(tuple(findings), len(results), dag_count, clean, errors, warnings=warnings)
