"""A fix's node replacements applied to a file's libcst tree, and what a fixed file records (the
fixes applied, the ones dropped): below engine/fixes.py (Python files) and engine/yaml_fixes.py
(dag-factory YAML), which both apply fixes this way. A text CPython cannot compile is None."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import libcst as cst

from dagguard.engine.results import FileResult
from dagguard.rules.base import Fix, Replacement

MAX_PASSES = 20


@dataclass(frozen=True)
class AppliedFix:
    code: str
    rule: str
    description: str


@dataclass(frozen=True)
class DroppedFix:
    """A fix that was not applied because the text it gave did not compile."""

    path: str
    line: int
    code: str
    description: str
    reason: str = "the fixed file would not compile"


@dataclass(frozen=True)
class FileFix:
    path: Path
    original: bytes
    fixed: bytes
    applied: tuple[AppliedFix, ...]
    dropped: tuple[DroppedFix, ...]
    result: FileResult               # what checking the fixed text finds

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


class _Replacer(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, Replacement]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        return self.replacements.get(id(original_node), updated_node)


def _apply(module: cst.Module, fixes: Sequence[Fix]) -> Optional[bytes]:
    """The fixed text, or None when it is not valid Python (or libcst cannot write the tree)."""
    replacements = {id(old): new for fix in fixes for old, new in fix.replacements}
    try:
        tree = module.visit(_Replacer(replacements))
        if any(fix.imports for fix in fixes):
            # libcst's codemod package imports its matchers (about 0.3 s): only a fix that adds
            # an import pays for it, never a plain check.
            from libcst.codemod import CodemodContext
            from libcst.codemod.visitors import AddImportsVisitor, ImportItem

            imports = [ImportItem(i.module, i.name) for fix in fixes for i in fix.imports]
            tree = AddImportsVisitor(CodemodContext(), imports).transform_module(tree)
        fixed = tree.bytes
    except Exception:  # a fix that builds a tree libcst cannot write is a dropped fix, not a crash
        return None
    return fixed if _compiles(fixed) else None


def _compiles(source: bytes) -> bool:
    try:
        compile(source, "<fixed>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
