"""Fixes in dag-factory YAML. A rule's fix is applied to the generated Python (its node
replacement, as in any file); each line it changes is turned into a text edit of the YAML
entry the line comes from: a renamed keyword renames the key, a new literal value replaces the
scalar, a keyword added to a DAG's call becomes a `key: value` line at the top of its block.
Everything else in the file (comments, order, quoting, blank lines) stays byte for byte; a
fix the YAML cannot take that way is not offered.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from dagguard.config import Settings
from dagguard.engine.results import display_path

from dagguard.engine.yaml_edits import Edit, _apply_edits, _overlaps, yaml_edits


def fix_yaml_source(source: bytes, path: Path, settings: Settings, now: dt.datetime, unsafe_fixes: bool,
                    shown: Optional[str] = None) -> Any:
    """engine/fixes.fix_source for a dag-factory YAML file: text edits, pass after pass."""
    from dagguard.engine.findings import fix_applies
    from dagguard.engine.fix_apply import MAX_PASSES, AppliedFix, DroppedFix, FileFix
    from dagguard.engine.runner import check_source
    from dagguard.engine.yaml_check import check_yaml
    from dagguard.model.dags.dag_factory import YamlError, read_dag_file
    from dagguard.rules.base import SAFE

    shown = shown or display_path(path)
    state = check_yaml(source, path, settings, now, shown, keep_fixes=True, check_python=check_source)
    applied: list[Any] = []
    dropped: list[Any] = []
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError:
        text = None   # the edits would re-encode the file's other bytes too
    for _ in range(MAX_PASSES if text is not None else 0):
        candidates = sorted(((finding, fix) for finding, fix in state.result.fixes
                             if fix_applies(fix.safety, unsafe_fixes)), key=lambda pair: pair[1].safety != SAFE)
        chosen: list[tuple[Any, Any]] = []
        taken: list[Edit] = []
        for finding, fix in candidates:
            edits = yaml_edits(state.text, state.generated, state.dag_file, state.module, fix)
            if not edits or any(_overlaps(edit, other) for edit in edits for other in taken):
                continue
            taken.extend(edits)
            chosen.append((finding, fix))
        if not chosen:
            break
        fixed = _apply_edits(text, taken)
        try:
            still_dags = read_dag_file(fixed, path) is not None
        except YamlError:
            still_dags = False
        if not still_dags:
            dropped.extend(DroppedFix(f.path, f.line, f.code, fix.description, "the fixed YAML would not parse")
                           for f, fix in chosen)
            break
        applied.extend(AppliedFix(f.code, f.rule, fix.description) for f, fix in chosen)
        if fixed == text:
            break
        text = fixed
        state = check_yaml(text.encode("utf-8"), path, settings, now, shown, keep_fixes=True,
                           check_python=check_source)
    result = replace(state.result, module=None, fixes=())
    return FileFix(path, source, text.encode("utf-8") if text is not None and applied else source,
                   tuple(applied), tuple(dropped), result)


def fix_one_yaml(source: bytes, path: Path, settings: Settings, now: dt.datetime, code: str, line: int,
                 column: int, shown: Optional[str] = None) -> Optional[bytes]:
    """engine/fixes.fix_one for a dag-factory YAML file: the text with that finding's fix alone."""
    from dagguard.engine.runner import check_source
    from dagguard.engine.yaml_check import check_yaml

    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError:
        return None
    state = check_yaml(source, path, settings, now, shown or display_path(path), keep_fixes=True,
                       check_python=check_source)
    for finding, fix in state.result.fixes:
        if (finding.code, finding.line, finding.column) == (code, line, column):
            edits = yaml_edits(state.text, state.generated, state.dag_file, state.module, fix)
            return _apply_edits(text, edits).encode("utf-8") if edits else None
    return None
