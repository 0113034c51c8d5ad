"""Check files: parse once, build the model once, run every enabled rule on it, locate only
the reported nodes, then apply noqa and per-file-ignores."""

from __future__ import annotations

import itertools
import datetime as dt
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence, Union

import libcst as cst

from dagguard.config import Settings
from dagguard.engine import collector
from dagguard.engine.deep_stack import run_deep
from dagguard.engine.files import MAX_FILE_BYTES, UnreadableFile, read_source, too_large_message
from dagguard.engine.large_files import LARGE_FILE_BYTES, Piece, cut
from dagguard.engine.findings import Finding
from dagguard.engine.results import CheckResult, FileResult, display_path
from dagguard.engine.results import syntax_finding as _syntax_finding
from dagguard.engine.noqa import directives, is_suppressed, noqa_warnings, parse_noqa
from dagguard.engine.parallel import available_cores, effective_jobs, map_in_order
from dagguard.engine.positions import Span, locate, locate_in_regions
from dagguard.engine.precheck import Precheck, cpython_check
from dagguard.engine.relevance import cannot_touch_a_dag, mentions_a_dag
from dagguard.engine.selection import ignored_for_file, is_enabled, syntax_result
from dagguard.engine.yaml_check import check_yaml_source, is_yaml_path
from dagguard.model.dags.branches import branch_paths
from dagguard.engine.dag_listing import summarize
from dagguard.model.dags.models import DagModel
from dagguard.model.dags.builder import build_file_model
from dagguard.model.basics.parsing import parse_module
from dagguard.model.project.factories import Resolver
from dagguard.model.project.project import ProjectIndex, project_layout
from dagguard.model.dags.unseen_dags import imported_modules, unseen_reason
from dagguard.model.basics.scope import ImportBinding, Scope
from dagguard.model.tasks.ownership import dag_regions
from dagguard.rules import ALL_RULES, RULES_BY_CODE, SYNTAX_ERROR, ProjectRule, Rule
from dagguard.rules.base import MADE_AT, DagSite, Fix, Report, RuleContext

# CheckResult, FileResult and display_path moved to results.py (it needs no libcst); still importable from here.
__all__ = ["MAX_FILE_BYTES", "CheckResult", "FileResult", "check_file", "check_file_deep", "check_files",
           "check_source", "display_path"]


def _parse(source: Union[bytes, str], shown: str, checked: Optional[Precheck] = None) -> Union[cst.Module, Finding]:
    """libcst's tree of `source`, or its DG000; `checked` is CPython's verdict when already made."""
    if len(source) > MAX_FILE_BYTES:
        return _syntax_finding(shown, 1, 1, too_large_message(len(source), MAX_FILE_BYTES))
    checked = checked or cpython_check(source)
    cpython = checked.error
    if cpython is not None and cpython.decisive:
        return _syntax_finding(shown, cpython.line, cpython.column, cpython.message)
    try:
        return parse_module(checked.source)
    except (RecursionError, MemoryError):
        return _syntax_finding(shown, 1, 1, "cannot parse: the file is nested too deeply")
    except Exception as exc:  # ParserSyntaxError, and a few other types on binary or odd input
        libcst_error = exc
    # CPython's message and position are the ones users know; libcst's are a fallback for
    # syntax CPython accepts but libcst does not.
    if cpython is not None:
        return _syntax_finding(shown, cpython.line, cpython.column, cpython.message)
    if isinstance(libcst_error, cst.ParserSyntaxError):
        message = " ".join(libcst_error.message.split()) or "invalid syntax"
        return _syntax_finding(shown, max(libcst_error.raw_line, 1), libcst_error.raw_column + 1,
                               f"cannot parse: {message}")
    return _syntax_finding(shown, 1, 1, f"cannot parse: {libcst_error}")


def _source_text(source: Union[bytes, str], module: cst.Module) -> str:
    if isinstance(source, str):
        return source
    return source.decode(module.encoding, errors="replace")


def _is_active(rule: Rule, path: Path, settings: Settings) -> bool:
    return is_enabled(rule.code, settings) and not ignored_for_file(rule.code, path, settings)


def check_source(source: Union[bytes, str], path: Path, settings: Settings, now: dt.datetime,
                 shown: Optional[str] = None, project: Optional[ProjectIndex] = None,
                 keep_fixes: bool = False, line_of: Optional[Callable[[int], int]] = None,
                 jobs: int = 1, yaml_generated: bool = False) -> FileResult:
    """Check one file's contents. Never raises for bad input: that becomes a DG000 finding.

    `project` resolves the factories the file imports from the project's own modules;
    `keep_fixes` keeps the tree and the fixes on the result, for engine/fixes.py; `line_of`
    maps the lines of a piece of a large file (engine/large_files.py) to the file's, and
    `jobs` processes may check a large file's pieces. A `.yml`/`.yaml` path is dag-factory
    YAML (engine/yaml_check.py), whose Python is checked here with `yaml_generated`."""
    shown = shown or display_path(path)
    if not yaml_generated and is_yaml_path(path):
        return check_yaml_source(source, path, settings, now, shown, keep_fixes, check_python=check_source)
    cached = project.parsed(path) if project is not None else None   # an import parsed it already
    if (line_of is None and not keep_fixes and cached is None and isinstance(source, bytes)
            and LARGE_FILE_BYTES < len(source) <= MAX_FILE_BYTES):
        in_pieces = _check_in_pieces(source, path, settings, now, shown, project, jobs)
        if in_pieces is not None:
            return in_pieces
    # A piece of a large file is made of statements CPython has accepted and found shallow.
    checked = Precheck(None, source) if line_of is not None else None
    if checked is None and len(source) <= MAX_FILE_BYTES and not mentions_a_dag(source):
        checked = cpython_check(source)
        if cannot_touch_a_dag(checked):
            return FileResult(path, ())
    if cached is None and checked is None and len(source) <= MAX_FILE_BYTES:
        checked = cpython_check(source)   # _parse would run it
    if keep_fixes and checked is not None and checked.source is not source:
        # A fix writes the tree back: it must hold the file's large constants, not their blanks.
        checked = replace(checked, source=source)
    parsed = cached or _parse(source, shown, checked)
    # libcst reads syntax this Python cannot compile (3.12 f-strings on 3.11): --fix could not
    # verify a fix, so it applies none and no finding is marked fixable.
    fixable = checked is None or checked.error is None
    if isinstance(parsed, Finding):
        if line_of is not None:
            parsed = replace(parsed, line=line_of(parsed.line), end_line=line_of(parsed.end_line))
        return syntax_result(path, parsed, settings)
    module = parsed
    if project is not None:
        project.reset_touched()
    try:
        model = build_file_model(module, Resolver(project, path, settings.dag_factories))
    except RecursionError:
        return FileResult(path, (_syntax_finding(shown, 1, 1, "cannot check: the file is nested too deeply"),))
    except Exception as exc:  # a model bug: no rule can run on this file, the others go on
        return FileResult(path, (), internal_errors=(_internal_error("the DAG model", shown, exc),))
    if project is not None and line_of is None and not any(dag.scope.whole is model.scope for dag in model.dags):
        # No DAG of its own at module level: a factory or helper module, which other files import.
        project.remember(path, module)
    context = RuleContext(path=path, settings=settings, now=now, place_of=_placer(module, shown, line_of),
                          line_of=lambda node: _line(module, module, node, line_of))
    reports: list[tuple[Rule, Report]] = []
    errors: list[str] = []
    for rule in ALL_RULES:
        if isinstance(rule, ProjectRule) or rule is SYNTAX_ERROR or not _is_active(rule, path, settings):
            continue
        try:
            reports.extend((rule, report) for report in rule.check(model, context))
        except Exception as exc:  # a rule bug must not stop the other rules or files
            errors.append(_internal_error(rule.code, shown, exc))

    dag_nodes = [dag.report_node for dag in model.dags]
    # A finding that does not name its DAG gets the one whose code holds its node.
    regions = dag_regions(model) if any(r.dag is None for _, r in reports) else {}
    # What libcst parsed (large constants blanked, or the index's read of the file), and
    # CPython's tree of it when the precheck made one: statements are located from their lines.
    text = _source_text(source, module)
    parsed_from = checked.source if cached is None and checked is not None else source
    try:
        spans, owners = locate_in_regions(
            module, [r.node for _, r in reports] + [n for _, r in reports for n in _fallbacks(r)] + dag_nodes,
            regions,
            text if parsed_from is source else _source_text(parsed_from, module),
            checked.tree if checked is not None else None) if (reports or dag_nodes) else ({}, {})
    except RecursionError:
        return FileResult(path, (_syntax_finding(shown, 1, 1, "cannot check: the file is nested too deeply"),))
    # Findings need it now; DAG sites need it later, for the cross-file rules.
    found = directives(text)  # one tokenize pass for both the suppressions and the warnings
    noqa = parse_noqa(text, found)
    file_line = line_of or (lambda line: line)
    warnings = tuple(f"{shown}:{file_line(line)}: {message}"
                     for line, message in noqa_warnings(text, RULES_BY_CODE, found)) if noqa else ()
    if line_of is not None:
        spans = {key: _moved(span, line_of) for key, span in spans.items()}
        noqa = {line_of(line): codes for line, codes in noqa.items()}

    findings: list[Finding] = []
    fixes: list[tuple[Finding, Fix]] = []
    flagged_dags: set[tuple[int, int]] = set()
    for rule, report in reports:
        span = spans.get(id(report.node))
        if span is None:
            # A node that is not in this file's tree (a value another module makes, reported
            # where it is made): the finding goes to the argument bringing it in, or to its
            # DAG, never to a wrong place.
            span = next((spans[id(n)] for n in _fallbacks(report) if id(n) in spans), None)
        if span is None:
            errors.append(f"internal error in {rule.code} on {shown}: could not locate the reported node")
            continue
        if report.made_at is not None or MADE_AT in report.message:
            where = report.made_at
            place = context.place_of(where.path, where.module, where.node) if where is not None else "another file"
            report = replace(report, message=report.message.replace(MADE_AT, place))
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
        flagged_dags.update((also.line, also.column) for dag in report.also_dags
                            if (also := spans.get(id(dag.report_node))) is not None)
        finding = _finding(rule, report if fixable else replace(report, fix=None), span, shown, owner,
                           _default_note(report, module, shown, line_of))
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
    summaries = tuple(summarize(dag, shown, spans[id(dag.report_node)].line)
                      for dag in model.dags if id(dag.report_node) in spans)
    # Rules read constants lazily too: collect what the model and the rules resolved through,
    # and the .sql files they read.
    depends_on = (project.reset_touched() if project is not None else frozenset()) | model.read_files
    imports_airflow = _imports_airflow(model.scope) and not _extends_airflow(module, model.scope)
    # Only a file that imports airflow and shows no DAG is asked why: a walk of a few files.
    reason = unseen_reason(module, model.scope, text, path) if imports_airflow and not model.dags else None
    imports = imported_modules(module, path, checked.tree if checked is not None else None)
    return FileResult(path, tuple(findings), sites, len(model.dags), frozenset(flagged_dags), noqa, tuple(errors),
                      imports_airflow=imports_airflow,
                      dags=summaries, depends_on=depends_on,
                      module=module if keep_fixes else None, fixes=tuple(fixes) if keep_fixes else (),
                      warnings=warnings, unseen_reason=reason, imports=imports,
                      absent_modules=project.absent_modules(imports) if project is not None else frozenset())


def _moved(span: Span, line_of: Callable[[int], int]) -> Span:
    return Span(line_of(span.line), span.column, line_of(span.end_line), span.end_column)


def _check_in_pieces(source: bytes, path: Path, settings: Settings, now: dt.datetime, shown: str,
                     project: Optional[ProjectIndex], jobs: int) -> Optional[FileResult]:
    """A large file's result, checked piece by piece (None: check it whole)."""
    pieces = cut(source)
    if pieces is None:
        return None
    if pieces.error is not None:
        error = pieces.error
        return syntax_result(path, _syntax_finding(shown, error.line, error.column, error.message), settings)
    if not pieces.touches_a_dag and not mentions_a_dag(source):
        return FileResult(path, ())
    if jobs > 1:
        # A piece is seconds of work: worth a process of its own, as files are in a pool.
        key = ProjectKey(next(_RUNS), project.roots, project.packages) if project is not None else None
        results = list(map_in_order(_check_piece, pieces.pieces, path, settings, now, shown, key,
                                    jobs=jobs, per_job=1))
    else:
        results = [check_source(piece.source, path, settings, now, shown, project, line_of=piece.line_of)
                   for piece in pieces.pieces]
    # The file's imports head every piece: what is found there is found once per piece.
    return FileResult(
        path, tuple(dict.fromkeys(f for r in results for f in r.findings)),
        tuple(site for r in results for site in r.dag_sites), sum(r.dag_count for r in results),
        frozenset().union(*(r.flagged_dags for r in results)),
        {line: codes for r in results for line, codes in r.noqa.items()},
        tuple(dict.fromkeys(e for r in results for e in r.internal_errors)),
        imports_airflow=any(r.imports_airflow for r in results),
        dags=tuple(d for r in results for d in r.dags),
        depends_on=frozenset().union(*(r.depends_on for r in results)),
        warnings=tuple(dict.fromkeys(w for r in results for w in r.warnings)),
        unseen_reason=next((r.unseen_reason for r in results if r.unseen_reason), None)
        if not any(r.dag_count for r in results) else None,
        imports=frozenset().union(*(r.imports for r in results)))


def _check_piece(piece: Piece, path: Path, settings: Settings, now: dt.datetime, shown: str,
                 project: Optional["ProjectKey"]) -> FileResult:
    """One piece of a large file, in a pool worker."""
    index = _project_index(project) if project is not None else None
    result = run_deep(check_source, piece.source, path, settings, now, shown, index, False, piece.line_of)
    collector.after_file()   # the worker's next piece scans only its own objects
    return result


def _internal_error(where: str, shown: str, exc: BaseException) -> str:
    return f"internal error in {where} on {shown}: {type(exc).__name__}: {exc}"


def _imports_airflow(scope: Scope) -> bool:
    return any(type(b) is ImportBinding and (b.qualname == "airflow" or b.qualname.startswith("airflow."))
               for bindings in scope.bindings.values() for b in bindings)


def _extends_airflow(module: cst.Module, scope: Scope) -> bool:
    """Does the module define a class on an Airflow base (an operator, hook, sensor, plugin)?
    Such a module is a library of the DAG files, not one whose DAGs went unseen."""
    return any(type(stmt) is cst.ClassDef and any(
        (scope.qualname(base.value) or "").startswith("airflow.") for base in stmt.bases)
        for stmt in module.body)


def _placer(module: cst.Module, shown: str,
            line_of: Optional[Callable[[int], int]]) -> Callable[[Optional[Path], Optional[cst.Module], cst.CSTNode], str]:
    """RuleContext.place_of for this file: `path:line` of a node, here or in a project module."""
    def place_of(path: Optional[Path], home: Optional[cst.Module], node: cst.CSTNode) -> str:
        where = display_path(path) if path is not None else shown
        line = _line(module, home if home is not None else module, node, line_of)
        return where if line is None else f"{where}:{line}"
    return place_of


def _line(module: cst.Module, tree: cst.Module, node: cst.CSTNode,
          line_of: Optional[Callable[[int], int]]) -> Optional[int]:
    """The line of `node` in `tree`, mapped to the user's file when `tree` is the checked module
    (`line_of`: a notebook cell's or a YAML DAG's lines)."""
    span = locate(tree, [node]).get(id(node))
    if span is None:
        return None
    return line_of(span.line) if tree is module and line_of is not None else span.line


def _fallbacks(report: Report) -> tuple[cst.CSTNode, ...]:
    """Where a report goes when its node is not in the file: its argument's place, its DAG."""
    found: tuple[cst.CSTNode, ...] = ()
    if report.argument is not None and report.argument.report_node is not report.node:
        found += (report.argument.report_node,)
    return found + ((report.dag.report_node,) if report.dag is not None else ())


def _default_note(report: Report, module: cst.Module, shown: str,
                  line_of: Optional[Callable[[int], int]] = None) -> Optional[str]:
    """`the value is the default of create_dag's parameter 'catchup' (common/factory.py:12)`."""
    arg = report.argument
    default = arg.factory_default if arg is not None else None
    if default is None:
        return None
    where = display_path(default.path) if default.path is not None else shown
    if default.node is None:
        return f"the value is {default.factory}'s `defaults` entry '{default.parameter}' declared in {where}"
    home = default.module if default.module is not None else module
    span = locate(home, [default.node]).get(id(default.node))
    if span is not None and home is module and line_of is not None:
        span = _moved(span, line_of)
    line = f":{span.line}" if span is not None else ""
    return f"the value is the default of {default.factory}'s parameter '{default.parameter}' ({where}{line})"


def _finding(rule: Rule, report: Report, span: Span, shown: str, dag: Optional[DagModel],
             note: Optional[str] = None) -> Finding:
    help_text = f"{report.help}; {note}" if report.help and note else (report.help or note)
    return Finding(
        path=shown, line=span.line, column=span.column, code=rule.code, rule=rule.name,
        severity=report.severity or rule.severity, end_line=span.end_line, end_column=span.end_column,
        message=report.message, help=help_text,
        dag_id=dag.dag_id if dag is not None else None, fixable=report.fix is not None,
        fix_safety=report.fix.safety if report.fix else None,
        fix_description=report.fix.description if report.fix else None,
    )


def check_file(path: Path, settings: Settings, now: dt.datetime,
               project: Optional[ProjectIndex] = None, jobs: int = 1) -> FileResult:
    """Read and check one file; an unreadable file is a DG000 finding."""
    shown = display_path(path)
    try:
        source = read_source(path, MAX_FILE_BYTES)
    except UnreadableFile as exc:
        if is_yaml_path(path) and str(exc).startswith("file is too large"):
            return FileResult(path, ())   # a large YAML file is data, not a dag-factory DAG file
        return FileResult(path, (_syntax_finding(shown, 1, 1, str(exc)),))
    return check_source(source, path, settings, now, shown, project, jobs=jobs)


def _check_file_isolated(path: Path, settings: Settings, now: dt.datetime,
                         project: Optional[ProjectIndex] = None, jobs: int = 1) -> FileResult:
    """check_file, with any exception it lets through reported for this file alone."""
    try:
        return check_file(path, settings, now, project, jobs)
    except Exception as exc:
        return FileResult(path, (), internal_errors=(_internal_error("the checker", str(path), exc),))


@dataclass(frozen=True)
class ProjectKey:
    """Which run's project index a process checks files with (picklable, for pool workers)."""

    run: int
    roots: tuple[Path, ...]
    packages: tuple[tuple[str, Path], ...] = ()


_RUNS = itertools.count()
# The project index of the run this process is checking files for; one per process, so a
# pool worker parses each project module at most once, as the parent does without a pool.
_CURRENT: dict[ProjectKey, ProjectIndex] = {}


def _project_index(key: ProjectKey) -> ProjectIndex:
    index = _CURRENT.get(key)
    if index is None:
        _CURRENT.clear()   # an earlier run's trees may be stale
        index = _CURRENT[key] = ProjectIndex(key.roots, key.packages)
    return index


def check_file_deep(path: Path, settings: Settings, now: dt.datetime,
                    project: Optional[ProjectKey] = None, jobs: int = 1) -> FileResult:
    """The isolated check_file on the large-stack thread; what a pool worker runs for each file
    (`jobs`: processes for a large file's pieces, when the file is checked in-process)."""
    result = run_deep(_check_file_isolated, path, settings, now,
                      _project_index(project) if project is not None else None, jobs)
    collector.after_file()
    return result


def check_files(files: Sequence[Path], paths: Sequence[Path], settings: Settings, now: dt.datetime,
                jobs: Optional[int] = None) -> Iterator[FileResult]:
    """Check `files` (found under the given `paths`), in `jobs` processes when they pay, in order."""
    # The index itself stays in each process that checks files: workers get its key.
    roots, packages = project_layout(paths, settings.config_path, settings.src, settings.packages, files)
    project = ProjectKey(next(_RUNS), roots, packages)
    # Files in one process (few of them): a large one may spread its pieces over the cores.
    piece_jobs = (jobs or available_cores()) if effective_jobs(jobs, len(files)) == 1 else 1
    try:
        yield from map_in_order(check_file_deep, files, settings, now, project, piece_jobs, jobs=jobs)
    finally:
        _CURRENT.clear()   # the run's trees go with it
        collector.end_of_run()
