"""Check a dag-factory YAML file: read its DAGs (model/dags/dag_factory.py), check the Python they
stand for (model/dags/dag_factory_source.py) with the same model and rules as any DAG file, then
put every finding back on the YAML line and column it comes from, and apply the file's own
`# noqa` comments.

A YAML file that is not dag-factory's (CI configs, docker-compose, pre-commit) gives nothing;
one whose text looks like dag-factory's but does not parse is a DG000 finding.
"""

from __future__ import annotations

import bisect
import datetime as dt
import io
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Union

from dagguard.config import Settings
from dagguard.engine.findings import Finding
from dagguard.engine.noqa import is_suppressed, noqa_warnings
from dagguard.engine.results import FileResult, display_path, syntax_finding
from dagguard.engine.selection import syntax_result
from dagguard.model.dags.dag_factory import (YAML_SUFFIXES, Place, YamlDagFile, YamlError, compose, defaults_files,
                                        is_defaults_file, may_be_dag_factory, read_dag_file,
                                        surely_meant_for_dag_factory, yaml_available)

# What checks the Python generated from a YAML file: engine/runner.py's check_source.
PythonCheck = Callable[..., FileResult]

FOUND_BY = "dag-factory"
MISSING_PYYAML = "not checked: dag-factory YAML needs PyYAML (pip install 'dagguard[yaml]')"


def is_yaml_path(path: Path) -> bool:
    """Is this a file dag-factory would consider (its default suffixes)?"""
    return path.name.endswith(YAML_SUFFIXES)


@dataclass
class YamlCheck:
    """One YAML file checked: its result, and what its fixes are translated with."""

    result: FileResult
    text: str = ""
    generated: Any = None             # GeneratedSource
    dag_file: Optional[YamlDagFile] = None
    module: Any = None                # the generated Python's libcst tree, with keep_fixes


def check_yaml_source(source: Union[bytes, str], path: Path, settings: Settings, now: dt.datetime,
                      shown: Optional[str] = None, keep_fixes: bool = False, *,
                      check_python: PythonCheck) -> FileResult:
    """Check one YAML file's contents; never raises for bad input (that is a DG000 finding).
    `check_python` checks the generated Python (engine/runner.py's check_source, which calls this
    for a YAML path: passed in, so this module never imports the runner back)."""
    return check_yaml(source, path, settings, now, shown, keep_fixes, check_python=check_python).result


def check_yaml(source: Union[bytes, str], path: Path, settings: Settings, now: dt.datetime,
               shown: Optional[str] = None, keep_fixes: bool = False, *, check_python: PythonCheck) -> YamlCheck:
    shown = shown or display_path(path)
    data = source.encode("utf-8", errors="replace") if isinstance(source, str) else source
    if is_defaults_file(path) or not may_be_dag_factory(data):
        return YamlCheck(FileResult(path, ()))
    if not yaml_available():
        return YamlCheck(FileResult(path, (), warnings=(f"{shown}:1: {MISSING_PYYAML}",)))
    text = source if isinstance(source, str) else source.decode("utf-8", errors="replace")
    try:
        defaults = [(found, _compose_file(found)) for found in defaults_files(path)] if path.name else []
        dag_file = read_dag_file(text, path, defaults)
    except YamlError as exc:
        if not surely_meant_for_dag_factory(data):
            return YamlCheck(FileResult(path, ()))   # other YAML, or several documents: not ours to judge
        return YamlCheck(syntax_result(path, syntax_finding(shown, exc.line, exc.column, str(exc)), settings))
    if dag_file is None:
        return YamlCheck(FileResult(path, ()))
    from dagguard.model.dags.dag_factory_source import generate

    generated = generate(dag_file)
    checked = check_python(generated.text, path, settings, now, shown, keep_fixes=True, yaml_generated=True)
    directives = yaml_directives(text)
    noqa = {line: (None if d.codes is None else frozenset(d.codes)) for line, d in directives.items()}
    mapper = _Mapper(generated)
    findings: list[Finding] = []
    fixes = []
    fix_of = {id(finding): fix for finding, fix in checked.fixes}
    module = checked.module
    for finding in checked.findings:
        moved = mapper.finding(finding)
        dag_line = generated.dag_places[finding.dag_id].line if finding.dag_id in generated.dag_places else None
        if is_suppressed(noqa, finding.code, (moved.line,) + ((dag_line,) if dag_line else ())):
            continue
        fix = fix_of.get(id(finding))
        if fix is not None:
            from dagguard.engine.yaml_edits import yaml_edits

            if yaml_edits(text, generated, dag_file, module, fix) is None:
                fix = None   # a fix the YAML cannot take as a text edit
                moved = replace(moved, fixable=False, fix_safety=None, fix_description=None)
        findings.append(moved)
        if fix is not None:
            fixes.append((moved, fix))
    for problem in dag_file.problems:
        finding = syntax_finding(
            shown, problem.place.line, problem.place.column,
            f"'{problem.key}' is not a mapping: dag-factory fails on it and loads no DAG of this file")
        kept = syntax_result(path, finding, settings).findings   # DG000 unless it is ignored
        findings.extend(f for f in kept if not is_suppressed(noqa, f.code, (f.line,)))
    from dagguard.rules import RULES_BY_CODE

    warnings = tuple(f"{shown}:{line}: {message}" for line, message in noqa_warnings(text, RULES_BY_CODE, directives))
    sites = tuple(mapper.site(site) for site in checked.dag_sites)
    # The DAGs with a finding left after the YAML's noqa comments (not the generated file's).
    flagged = frozenset((generated.dag_places[f.dag_id].line, generated.dag_places[f.dag_id].column)
                        for f in findings if f.dag_id in generated.dag_places)
    result = FileResult(
        path, tuple(findings), sites, checked.dag_count, flagged, noqa,
        checked.internal_errors, imports_airflow=False,
        dags=tuple(replace(summary, line=mapper.line(summary.line), found_by=FOUND_BY) for summary in checked.dags),
        depends_on=frozenset(dag_file.read_files) | checked.depends_on,
        module=module if keep_fixes else None, fixes=tuple(fixes) if keep_fixes else (),
        warnings=warnings,
    )
    return YamlCheck(result, text, generated, dag_file, module)


def _compose_file(path: Path) -> Any:
    from dagguard.engine.files import MAX_FILE_BYTES, UnreadableFile, read_source

    try:
        text = read_source(path, MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except UnreadableFile as exc:
        raise YamlError(f"cannot read {path.name}, which dag-factory merges into this file: {exc}") from None
    try:
        return compose(text)[0]
    except YamlError as exc:
        raise YamlError(f"{path.name} (line {exc.line}), which dag-factory merges into this file, {exc}") from None


class _Mapper:
    """From the generated Python's lines and columns to the YAML's."""

    def __init__(self, generated: Any) -> None:
        self.generated = generated
        self.first = next(iter(generated.dag_places.values()), Place(1, 1, 1, 1))

    def place(self, line: int, column: int) -> Place:
        where = self.generated.lines.get(line)
        if where is None:
            return self.first
        return where.value if where.value_column > 1 and column >= where.value_column else where.key

    def line(self, line: int) -> int:
        return self.place(line, 1).line

    def finding(self, finding: Finding) -> Finding:
        place = self.place(finding.line, finding.column)
        moved = replace(finding, line=place.line, column=place.column, end_line=place.end_line,
                        end_column=place.end_column)
        where = self.generated.lines.get(finding.line)
        source = where.entry.source if where is not None and where.entry is not None else None
        if source is not None:   # reported at the DAG's key: say where the value is written
            note = f"the value is set in {display_path(source)}"
            moved = replace(moved, help=f"{moved.help}; {note}" if moved.help else note)
        return moved

    def site(self, site: Any) -> Any:
        place = self.place(site.line, site.column)
        return replace(site, line=place.line, column=place.column, end_line=place.end_line,
                       end_column=place.end_column, branches=())


def yaml_comments(text: str) -> Iterator[tuple[int, int, str]]:
    """(line, 0-based column, text) of each YAML comment: a `#` after a space or at a line's
    start that is not inside a scalar (PyYAML's scanner gives the scalars' extents)."""
    import yaml

    spans: list[tuple[int, int]] = []
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, yaml.ScalarToken):
                spans.append((token.start_mark.index, token.end_mark.index))
    except yaml.YAMLError:
        pass
    starts = [start for start, _ in spans]
    offset = 0
    for number, line in enumerate(io.StringIO(text, newline="").readlines(), start=1):
        position = line.find("#")
        while position >= 0:
            absolute = offset + position
            at = bisect.bisect_right(starts, absolute) - 1
            inside = at >= 0 and spans[at][0] <= absolute < spans[at][1]
            if not inside and (position == 0 or line[position - 1] in " \t"):
                yield number, position, line[position:].rstrip("\r\n")
                break
            position = line.find("#", position + 1)
        offset += len(line)


def yaml_directives(text: str) -> Mapping[int, Any]:
    """The file's `# noqa` comments by line, as engine/noqa.py reads them in Python."""
    from dagguard.engine.noqa import directive_of

    if "noqa" not in text.lower():
        return {}
    found = {}
    for line, column, comment in yaml_comments(text):
        directive = directive_of(line, column, comment)
        if directive is not None:
            found[line] = directive
    return found
