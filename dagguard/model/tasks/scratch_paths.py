"""Paths under the run's temporary folder: `/tmp/...`, `tempfile.mkdtemp()`, a
`TemporaryDirectory()` or `NamedTemporaryFile()`, `tempfile.gettempdir()`, and paths joined onto
them. A file written there is scratch (staging for an upload, a work file), not a dataset."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from dagguard.model.tasks.callable_tree import CallableTree, argument
from dagguard.model.basics.scope import Scope

TEMP_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")
# tempfile's functions and classes whose value (or `.name`) is a path in the temporary folder.
TEMPFILE_MAKERS = frozenset({
    "tempfile.mkdtemp", "tempfile.mkstemp", "tempfile.gettempdir", "tempfile.gettempdirb",
    "tempfile.TemporaryDirectory", "tempfile.NamedTemporaryFile", "tempfile.TemporaryFile",
    "tempfile.SpooledTemporaryFile", "tempfile.mktemp",
})
# Calls whose result is a path (or an open file) under their first argument.
_PATH_JOINS = frozenset({
    "os.path.join", "posixpath.join", "os.path.abspath", "os.path.normpath", "os.path.realpath",
    "os.path.expanduser", "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "str", "open",
    "io.open", "gzip.open", "bz2.open", "lzma.open", "codecs.open", "csv.writer", "csv.DictWriter",
})
# Methods of a path or folder in the temporary folder that give another one under it.
_PATH_METHODS = frozenset({"joinpath", "with_name", "with_suffix", "with_stem", "resolve", "absolute",
                           "open", "format"})
_MAX_DEPTH = 6


def is_temp_text(text: str) -> bool:
    """A path string in the temporary folder: `/tmp`, `/tmp/...`, `/var/tmp/...`."""
    return any(text == folder or text.startswith(folder + "/") for folder in TEMP_FOLDERS)


class ScratchPaths:
    """Answers "is this expression a path (or file) in the temporary folder" in one callable."""

    def __init__(self, tree: CallableTree) -> None:
        self.tree = tree

    def is_scratch(self, node: cst.BaseExpression) -> bool:
        """Is `node` a path, folder or open file under the run's temporary folder?"""
        return self._scratch(node, self.tree.scope, 0, frozenset())

    def _scratch(self, node: cst.BaseExpression, scope: Scope, depth: int, seen: frozenset[str]) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(node, cst.SimpleString):
            text = self.tree.evaluator.value(node)
            return isinstance(text, str) and is_temp_text(text)
        if isinstance(node, cst.FormattedString):
            return self._scratch_start(node, scope, depth, seen)
        if isinstance(node, cst.ConcatenatedString):
            return self._scratch(node.left, scope, depth + 1, seen)
        if isinstance(node, cst.Name):
            return self._scratch_name(node.value, scope, depth, seen)
        if isinstance(node, cst.Attribute):
            # `tmp.name` of a NamedTemporaryFile / TemporaryDirectory, `tmp_path.parent`.
            return node.attr.value in ("name", "parent") and self._scratch(node.value, scope, depth + 1, seen)
        if isinstance(node, cst.Subscript):
            return self._scratch(node.value, scope, depth + 1, seen)  # tempfile.mkstemp()[1]
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Divide, cst.Modulo)):
            return self._scratch(node.left, scope, depth + 1, seen)  # "/tmp/" + name, Path(tmp) / "x"
        if isinstance(node, cst.Call):
            return self._scratch_call(node, scope, depth, seen)
        return False

    def _scratch_start(self, node: cst.FormattedString, scope: Scope, depth: int, seen: frozenset[str]) -> bool:
        """An f-string starting with a temporary path: `f"/tmp/{x}"`, `f"{tmpdir}/x.csv"`."""
        if not node.parts:
            return False
        first = node.parts[0]
        if isinstance(first, cst.FormattedStringText):
            return is_temp_text(first.value.split("{", 1)[0]) or (
                first.value.rstrip("/") in TEMP_FOLDERS and len(node.parts) > 1)
        if isinstance(first, cst.FormattedStringExpression):
            return self._scratch(first.expression, scope, depth + 1, seen)
        return False

    def _scratch_call(self, node: cst.Call, scope: Scope, depth: int, seen: frozenset[str]) -> bool:
        qual = scope.qualname(node.func) or (node.func.value if isinstance(node.func, cst.Name) else None)
        if qual in TEMPFILE_MAKERS:
            return True
        if qual in _PATH_JOINS:
            first = argument(node, 0, ("path", "file", "f", "a"))
            return first is not None and self._scratch(first.value, scope, depth + 1, seen)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _PATH_METHODS:
            return self._scratch(node.func.value, scope, depth + 1, seen)
        return False

    def _scratch_name(self, name: str, scope: Scope, depth: int, seen: frozenset[str]) -> bool:
        """A name bound, in the callable, to a temporary path (every assignment, or `with ... as`),
        or a module constant that is one."""
        if name in seen:
            return False
        seen = seen | {name}
        values = self._local_values(name) if scope is self.tree.scope else []
        if values is None:
            return False
        if values:
            return all(self._scratch(v, scope, depth + 1, seen) for v in values)
        found = scope.constant(name)
        return found is not None and self._scratch(found[0], found[1], depth + 1, seen)

    def _local_values(self, name: str) -> Optional[list[cst.BaseExpression]]:
        """What `name` is bound to in the callable (`name = value`, `with value as name`); None
        when it is also bound in a way not followed (`+=`, a loop)."""
        values: list[cst.BaseExpression] = []
        for node in self.tree.nodes:
            if isinstance(node, cst.Assign):
                if any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets):
                    values.append(node.value)
            elif isinstance(node, cst.WithItem):
                target = _as_name(node)
                if target == name:
                    values.append(node.item)
            elif isinstance(node, (cst.AugAssign, cst.For)) and _binds(node, name):
                return None
        return values


def _as_name(item: cst.WithItem) -> Optional[str]:
    if item.asname is not None and isinstance(item.asname.name, cst.Name):
        return item.asname.name.value
    return None


def _binds(node: cst.CSTNode, name: str) -> bool:
    target = node.target if isinstance(node, (cst.AugAssign, cst.For)) else None
    return isinstance(target, cst.Name) and target.value == name
