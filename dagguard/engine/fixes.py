"""Apply the fixes findings carry, re-check, and write files: the only place that edits code.

A fix replaces nodes of the file's own libcst tree, so every byte outside them (comments,
spacing, quotes, encoding, BOM, line endings) comes back out of the code generator unchanged.
Fixes whose nodes overlap wait for a later pass over the re-checked text; passes repeat until
no fix applies (bounded, as ruff's are), so fixing twice gives what fixing once gave. A text
CPython cannot compile is never kept: the fix that breaks it is dropped and reported.
"""

from __future__ import annotations

import datetime as dt
import difflib
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Optional, Sequence

import libcst as cst

from dagguard.config import Settings
from dagguard.engine import collector
from dagguard.engine.deep_stack import run_deep
from dagguard.engine.files import UnreadableFile, discover_files, read_source
from dagguard.engine.findings import Finding, fix_applies
from dagguard.engine.fix_apply import (MAX_PASSES, AppliedFix, DroppedFix, FileFix, _apply,  # noqa: F401
                                      _compiles, _Replacer)
from dagguard.engine.yaml_check import is_yaml_path
from dagguard.engine.run import combine, problem_results
from dagguard.engine.runner import MAX_FILE_BYTES, CheckResult, FileResult, check_file, check_source, display_path
from dagguard.model.project.project import ProjectIndex, project_layout
from dagguard.model.basics.tree import child_nodes
from dagguard.rules.base import SAFE, Fix

@dataclass(frozen=True)
class FixRun:
    result: CheckResult              # the findings left after fixing
    files: tuple[FileFix, ...]

    @property
    def applied(self) -> int:
        return sum(len(f.applied) for f in self.files)

    @property
    def dropped(self) -> tuple[DroppedFix, ...]:
        return tuple(d for f in self.files for d in f.dropped)


def fix_source(source: bytes, path: Path, settings: Settings, now: dt.datetime, unsafe_fixes: bool,
               shown: Optional[str] = None, project: Optional[ProjectIndex] = None) -> FileFix:
    """Fix one file's contents, pass after pass, until no applicable fix is left.

    `project` is the run's index, so a DAG made by a factory of another module is seen (and
    fixed) as `check` sees it."""
    shown = shown or display_path(path)
    if is_yaml_path(path):   # dag-factory YAML: its fixes are text edits (engine/yaml_fixes.py)
        from dagguard.engine.yaml_fixes import fix_yaml_source

        return fix_yaml_source(source, path, settings, now, unsafe_fixes, shown)  # type: ignore[no-any-return]
    text = source
    applied: list[AppliedFix] = []
    dropped: list[DroppedFix] = []
    refused: set[tuple[str, str, str]] = set()
    result = check_source(text, path, settings, now, shown, project, keep_fixes=True)
    reason = None
    if result.fixes and not _compiles(source):
        # libcst reads some syntax this Python does not (3.12 f-strings on 3.11): no fix can be checked.
        reason = "the file does not compile on this Python as it is"
    elif result.fixes and result.module is not None and result.module.bytes != source:
        # libcst would not write this file back as it is (it drops a form feed before the first
        # statement): a fix would change more than the fix.
        reason = "libcst cannot write this file back unchanged"
    if reason is not None:
        dropped = [DroppedFix(f.path, f.line, f.code, fix.description, reason) for f, fix in result.fixes
                   if fix_applies(fix.safety, unsafe_fixes)]
        return FileFix(path, source, source, (), tuple(dropped), _without_tree(result))
    for _ in range(MAX_PASSES):
        module = result.module
        # Safe fixes first: an unsafe one never takes the place of a safe one it overlaps.
        candidates = sorted(((finding, fix) for finding, fix in result.fixes
                             if fix_applies(fix.safety, unsafe_fixes) and _key(module, finding, fix) not in refused),
                            key=lambda pair: pair[1].safety != SAFE)
        if module is None or not candidates:
            break
        chosen = _non_overlapping(module, candidates)
        fixed = _apply(module, [fix for _, fix in chosen])
        if fixed is None:
            kept: list[tuple[Finding, Fix]] = []
            for finding, fix in chosen:
                if _apply(module, [f for _, f in kept] + [fix]) is not None:
                    kept.append((finding, fix))
                else:
                    refused.add(_key(module, finding, fix))
                    dropped.append(DroppedFix(finding.path, finding.line, finding.code, fix.description))
            if not kept:
                continue   # the fixes these overlapped get their turn without them
            chosen = kept
            fixed = _apply(module, [fix for _, fix in kept])
            assert fixed is not None
        applied.extend(AppliedFix(f.code, f.rule, fix.description) for f, fix in chosen)
        if fixed == text:
            break
        text = fixed
        if project is not None:
            project.forget(path)   # the index must read this file's new text, not its old tree
        result = check_source(text, path, settings, now, shown, project, keep_fixes=True)
    return FileFix(path, source, text, tuple(applied), tuple(dropped), _without_tree(result))


def fix_one(source: bytes, path: Path, settings: Settings, now: dt.datetime, code: str, line: int, column: int,
            shown: Optional[str] = None, project: Optional[ProjectIndex] = None) -> Optional[bytes]:
    """The text with only the fix of the finding `code` at (line, column) applied, as the
    fixing pass of fix_source would apply it (an editor's quick fix); None when that finding
    has no fix, or its fix cannot be applied to this text."""
    if is_yaml_path(path):   # a YAML fix is a text edit of the YAML, not of a tree
        from dagguard.engine.yaml_fixes import fix_one_yaml

        return fix_one_yaml(source, path, settings, now, code, line, column, shown)
    result = check_source(source, path, settings, now, shown or display_path(path), project, keep_fixes=True)
    module = result.module
    if module is None or module.bytes != source or not _compiles(source):
        return None   # the same refusals as fix_source's
    for finding, fix in result.fixes:
        if (finding.code, finding.line, finding.column) == (code, line, column):
            return _apply(module, [fix]) if _non_overlapping(module, [(finding, fix)]) else None
    return None


def _without_tree(result: FileResult) -> FileResult:
    return replace(result, module=None, fixes=())


def _key(module: Optional[cst.Module], finding: Finding, fix: Fix) -> tuple[str, str, str]:
    """A fix's identity across passes (its line may move when an earlier fix adds lines)."""
    first = fix.replacements[0][0] if fix.replacements else None
    text = module.code_for_node(first) if module is not None and first is not None else ""
    return finding.code, fix.description, text


def _non_overlapping(module: cst.Module, candidates: Sequence[tuple[Finding, Fix]]) -> list[tuple[Finding, Fix]]:
    """The candidates, in order, minus any whose nodes contain or sit inside an earlier one's,
    and any with a node outside this file's tree (a factory's, in another module)."""
    targets = {id(old) for _, fix in candidates for old, _ in fix.replacements}
    enclosing = _enclosing_targets(module, targets)
    taken: set[int] = set()
    chosen = []
    for finding, fix in candidates:
        nodes = {id(old) for old, _ in fix.replacements}
        if not nodes <= enclosing.keys():
            continue
        inside_taken = any(enclosing.get(n, frozenset()) & taken or n in taken for n in nodes)
        holds_taken = any(enclosing.get(t, frozenset()) & nodes for t in taken)
        if inside_taken or holds_taken:
            continue
        taken |= nodes
        chosen.append((finding, fix))
    return chosen


def _enclosing_targets(module: cst.Module, targets: set[int]) -> dict[int, frozenset[int]]:
    """For each target node, the target nodes that contain it."""
    found: dict[int, frozenset[int]] = {}
    stack: list[tuple[cst.CSTNode, frozenset[int]]] = [(module, frozenset())]
    while stack:
        node, outer = stack.pop()
        if id(node) in targets:
            found[id(node)] = outer
            outer = outer | {id(node)}
        stack.extend((child, outer) for child in child_nodes(node))
    return found


def fix_file(path: Path, settings: Settings, now: dt.datetime, unsafe_fixes: bool,
             project: Optional[ProjectIndex] = None) -> FileFix:
    """Fix one file's text (nothing is written here); an unreadable file is left as it is."""
    try:
        source = read_source(path, MAX_FILE_BYTES)  # regular files only: a FIFO would block forever
    except UnreadableFile:
        return FileFix(path, b"", b"", (), (), check_file(path, settings, now, project))
    return fix_source(source, path, settings, now, unsafe_fixes, display_path(path), project)


def fix_paths(paths: Iterable[Path], settings: Settings, now: dt.datetime, *, unsafe_fixes: bool,
              write: bool) -> FixRun:
    """Fix every Python file under `paths`; write the changed ones when `write` is true."""
    paths = list(paths)
    discovery = discover_files(paths, settings)
    files = discovery.files
    # The same module roots as check_paths: a factory-made DAG gets the findings check gives it.
    project = ProjectIndex(*project_layout(paths, settings.config_path, settings.src, settings.packages, files))
    fixed = []
    try:
        for path in files:
            fixed.append(run_deep(fix_file, path, settings, now, unsafe_fixes, project))
            collector.after_file()
    finally:
        collector.end_of_run()
    if write:
        for file_fix in fixed:
            if file_fix.changed:
                write_atomically(file_fix.path, file_fix.fixed)
    result = combine([f.result for f in fixed] + problem_results(discovery.problems, settings), settings)
    run = FixRun(result, tuple(fixed))
    return FixRun(replace(result, unsafe_fixes=unsafe_fixes, fixed=run.applied, after_fixes=write), run.files)


def write_atomically(path: Path, data: bytes) -> None:
    """Replace the file's contents in one rename, keeping its permission bits."""
    target = path.resolve()   # a symlink keeps pointing at the rewritten file
    mode = stat.S_IMODE(target.stat().st_mode)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".dagguard")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def unified_diff(file_fix: FileFix) -> str:
    """The diff --fix would write for one file, as `diff -u` shows it."""
    before, after = decoded(file_fix.original), decoded(file_fix.fixed)
    shown = display_path(file_fix.path)
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=shown, tofile=shown))


def decoded(source: bytes) -> str:
    """A file's bytes as text, in the encoding it declares (else UTF-8); bad bytes replaced."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding, errors="replace")
    except (SyntaxError, LookupError):
        return source.decode("utf-8", errors="replace")
