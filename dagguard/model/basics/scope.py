"""Name bindings of a file, built from its statements without executing anything.

A name resolves to a qualified name only when every binding that can reach it is an import
that agrees: `from airflow import DAG as D` makes `D` resolve to `airflow.DAG`; a local
`def DAG` or `DAG = ...` beside the import makes `DAG` resolve to nothing. Module-level code
sees only the bindings made before it, in statement order (`StatementScope`). Star imports and
rebinding (`X = DAG`) are known limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Optional, Sequence, Union

import libcst as cst

from dagguard.model.basics.tree import child_nodes


@dataclass(frozen=True)
class ImportBinding:
    qualname: str


@dataclass(frozen=True)
class ConstantBinding:
    """`NAME = <expr>`: a single assignment whose value may be evaluated statically."""

    value: cst.BaseExpression


@dataclass(frozen=True)
class FunctionBinding:
    node: cst.FunctionDef


@dataclass(frozen=True)
class ClassBinding:
    node: cst.ClassDef


@dataclass(frozen=True)
class ValueBinding:
    """A name whose static value is already known: a factory's parameter bound to what its
    caller passed (dagguard.model.project.factories)."""

    value: Any


@dataclass(frozen=True)
class OpaqueBinding:
    """Any other binding (a class, a parameter, a loop variable): never resolved."""


Binding = Union[ImportBinding, ConstantBinding, FunctionBinding, ClassBinding, ValueBinding, OpaqueBinding]
OPAQUE = OpaqueBinding()
_NOTHING: frozenset[str] = frozenset()


@dataclass
class Scope:
    """The bindings of one scope (module or function), chained to the enclosing scope."""

    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    parent: Optional["Scope"] = None

    def add(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)

    def lookup(self, name: str) -> Sequence[Binding]:
        """Every binding of `name` in the innermost scope that binds it."""
        scope: Optional[Scope] = self
        while scope is not None:
            found = scope.bindings.get(name)
            if found:
                return found
            scope = scope.parent
        return ()

    def single(self, name: str) -> Optional[Binding]:
        """The binding of `name` when there is exactly one, else None."""
        found = self.lookup(name)
        return found[0] if len(found) == 1 else None

    def qualnames(self, expr: cst.BaseExpression) -> frozenset[str]:
        """Qualified names `expr` (a Name or a dotted Attribute chain) can refer to.

        Empty when any binding of the base name is not an import.
        """
        # `type(...) is` rather than isinstance: libcst nodes are ABCs, whose isinstance checks
        # are slow, and this runs for every call in the file.
        attrs: list[str] = []
        while type(expr) is cst.Attribute:
            attrs.append(expr.attr.value)  # type: ignore[attr-defined]
            expr = expr.value  # type: ignore[attr-defined]
        if type(expr) is not cst.Name:
            return _NOTHING
        bindings = self.lookup(expr.value)  # type: ignore[attr-defined]
        if not bindings or not all(type(b) is ImportBinding for b in bindings):
            return _NOTHING
        suffix = "".join("." + a for a in reversed(attrs))
        return frozenset(b.qualname + suffix for b in bindings)  # type: ignore[union-attr]

    def resolves_to(self, expr: cst.BaseExpression, names: Iterable[str] | frozenset[str]) -> bool:
        """True when every qualified name `expr` can have is in `names`."""
        quals = self.qualnames(expr)
        return bool(quals) and quals <= frozenset(names)

    def qualname(self, expr: cst.BaseExpression) -> Optional[str]:
        """The qualified name of `expr` when all its bindings agree on one."""
        quals = self.qualnames(expr)
        return next(iter(quals)) if len(quals) == 1 else None

    @property
    def whole(self) -> "Scope":
        """This scope with every binding, as code that runs after all its statements sees it."""
        return self

    def constant(self, name: str) -> Optional[tuple[cst.BaseExpression, "Scope"]]:
        """The expression a module constant `name` is assigned, and the scope to read it in:
        this file's (`NAME = ...`), or a project module's that `name` is imported from. The one
        way every part of the model follows a name to its value."""
        binding = self.single(name)
        if type(binding) is ConstantBinding:
            return binding.value, self  # type: ignore[union-attr]
        if type(binding) is ImportBinding:
            link = self.project_link()
            if link is not None:
                return link.constant(binding.qualname)  # type: ignore[union-attr]
        return None

    def function(self, name: str) -> Optional[tuple[cst.FunctionDef, "Scope"]]:
        """The function `name` is bound to, and the scope it is defined in: this file's
        (`def name`), or a project module's that `name` is imported from."""
        binding = self.single(name)
        if type(binding) is FunctionBinding:
            return binding.node, self.whole  # type: ignore[union-attr]
        if type(binding) is ImportBinding:
            link = self.project_link()
            if link is not None:
                return link.function(binding.qualname)  # type: ignore[union-attr]
        return None

    def project_link(self) -> Optional["ProjectLink"]:
        return getattr(module_of(self), "project", None)


def module_of(scope: Scope) -> Scope:
    """The module scope `scope` is part of (a function's, a statement's): two nodes read in
    scopes of different modules live in different files."""
    root: Scope = scope
    while root.parent is not None:
        root = root.parent
    return getattr(root, "module", root)


class ProjectLink:
    """How a module's scope reaches the project's other modules (dagguard.model.project.project)."""

    def constant(self, qualname: str) -> Optional[tuple[cst.BaseExpression, Scope]]:
        raise NotImplementedError

    def function(self, qualname: str) -> Optional[tuple[cst.FunctionDef, Scope]]:
        """The project function `qualname` names, and its module's scope."""
        return None


@dataclass
class ModuleScope(Scope):
    """The module's bindings, with the top-level statement that makes each one."""

    # Per name, parallel to `bindings`: (statement index, made unconditionally by it).
    places: dict[str, list[tuple[int, bool]]] = field(default_factory=dict)
    constants: list[tuple[int, ConstantBinding]] = field(default_factory=list)
    project: Optional[ProjectLink] = None   # set when the file is checked with a project index
    _names_read: dict[int, frozenset[str]] = field(default_factory=dict, repr=False)
    # Per name, the top-level statements that may change its value in place (`d["k"] = v`,
    # `d.update(...)`, `del d[k]`): (statement index, the statement, made unconditionally).
    changes: dict[str, list[tuple[int, cst.CSTNode, bool]]] = field(default_factory=dict, repr=False)

    def add_at(self, name: str, binding: Binding, index: int, unconditional: bool) -> None:
        self.add(name, binding)
        self.places.setdefault(name, []).append((index, unconditional))
        if type(binding) is ConstantBinding:
            self.constants.append((index, binding))

    def read_by_constant_before(self, name: str, index: int) -> bool:
        """Does the value of a constant assigned before statement `index` mention `name`?"""
        for position, constant in self.constants:
            if position >= index:
                return False
            names = self._names_read.get(id(constant))
            if names is None:
                names = self._names_read[id(constant)] = names_in(constant.value)
            if name in names:
                return True
        return False

    def at(self, index: int) -> "StatementScope":
        """The scope seen by code that runs while top-level statement `index` runs."""
        return StatementScope(self, index)


class StatementScope(Scope):
    """The module scope as seen from inside one top-level statement: a binding reaches it when
    made by an earlier statement and not replaced by a later unconditional one before it. The
    statement's own bindings all reach it (it may be a loop, or bind before it uses)."""

    def __init__(self, module: ModuleScope, index: int) -> None:
        super().__init__(module.bindings, None)
        self.module = module
        self.index = index
        self._reaching: dict[str, Sequence[Binding]] = {}

    @property
    def whole(self) -> Scope:
        return self.module

    def lookup(self, name: str) -> Sequence[Binding]:
        found = self._reaching.get(name)
        if found is None:
            found = self._reaching[name] = self._reach(name)
        return found

    def _reach(self, name: str) -> Sequence[Binding]:
        bindings = self.bindings.get(name)
        if not bindings:
            return ()
        places = self.module.places[name]
        first, end = 0, 0
        for position, (index, unconditional) in enumerate(places):
            if index > self.index:
                break
            end = position + 1
            if unconditional and index < self.index:
                first = position
        # Evaluators follow a constant into its value from the scope of the use, not of the
        # assignment: if an older constant reads `name`, its older bindings must stay visible.
        if first and self.module.read_by_constant_before(name, places[first][0]):
            first = 0
        return bindings[first:end]


def names_in(expr: cst.CSTNode) -> frozenset[str]:
    """Every name the expression mentions, attribute names included."""
    names: set[str] = set()
    pending: list[cst.CSTNode] = [expr]
    while pending:
        node = pending.pop()
        if type(node) is cst.Name:
            names.add(node.value)  # type: ignore[attr-defined]
        else:
            pending.extend(child_nodes(node))
    return frozenset(names)


def dotted_name(expr: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))


def _import_bindings(stmt: Union[cst.Import, cst.ImportFrom]) -> Iterator[tuple[str, Binding]]:
    if isinstance(stmt, cst.Import):
        for alias in stmt.names:
            module = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                yield alias.asname.name.value, ImportBinding(module)
            else:
                # `import a.b.c` binds `a`, which refers to the package `a`.
                top = module.split(".", 1)[0]
                yield top, ImportBinding(top)
        return
    if isinstance(stmt.names, cst.ImportStar):
        return
    module = dotted_name(stmt.module) if stmt.module is not None else ""
    dots = "." * len(stmt.relative)
    base = f"{dots}{module}" if module else dots
    for alias in stmt.names:
        name = dotted_name(alias.name) or ""
        bound = name
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            bound = alias.asname.name.value
        qual = f"{base}.{name}" if base and not base.endswith(".") else f"{base}{name}"
        yield bound, ImportBinding(qual)


def target_names(target: cst.BaseExpression) -> Iterator[str]:
    """The names an assignment or `for` target binds (x; a, b; *rest)."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_names(target.value)


def _small_statement_bindings(stmt: cst.BaseSmallStatement) -> Iterator[tuple[str, Binding]]:
    if isinstance(stmt, (cst.Import, cst.ImportFrom)):
        yield from _import_bindings(stmt)
    elif isinstance(stmt, cst.Assign):
        if len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name):
            yield stmt.targets[0].target.value, ConstantBinding(stmt.value)
        else:
            for target in stmt.targets:
                for name in target_names(target.target):
                    yield name, OPAQUE
    elif isinstance(stmt, cst.AnnAssign):
        if isinstance(stmt.target, cst.Name):
            binding = ConstantBinding(stmt.value) if stmt.value is not None else OPAQUE
            yield stmt.target.value, binding
    elif isinstance(stmt, cst.AugAssign):
        for name in target_names(stmt.target):
            yield name, OPAQUE
    elif isinstance(stmt, (cst.Global, cst.Nonlocal)):
        for item in stmt.names:
            yield item.name.value, OPAQUE


def statement_bindings(body: Sequence[cst.CSTNode]) -> Iterator[tuple[str, Binding]]:
    """Bindings made by a block's statements, including those in if/try/with/for blocks,
    but not inside nested functions or classes (their own scopes)."""
    for stmt in body:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                yield from _small_statement_bindings(small)
        elif isinstance(stmt, cst.FunctionDef):
            yield stmt.name.value, FunctionBinding(stmt)
        elif isinstance(stmt, cst.ClassDef):
            yield stmt.name.value, ClassBinding(stmt)
        elif isinstance(stmt, cst.BaseCompoundStatement):
            if isinstance(stmt, cst.With):
                for item in stmt.items:
                    if item.asname is not None:
                        for name in target_names(item.asname.name):
                            yield name, OPAQUE
            elif isinstance(stmt, cst.For):
                for name in target_names(stmt.target):
                    yield name, OPAQUE
            yield from statement_bindings(_blocks_of(stmt))


def _blocks_of(stmt: cst.BaseCompoundStatement) -> list[cst.CSTNode]:
    """Statements of every block of a compound statement (bodies, else, handlers...)."""
    out: list[cst.CSTNode] = []
    pending: list[cst.CSTNode] = [stmt]
    while pending:
        node = pending.pop()
        body = getattr(node, "body", None)
        if isinstance(body, cst.IndentedBlock):
            out.extend(body.body)
        elif isinstance(body, cst.SimpleStatementSuite):
            out.append(body)
        for attr in ("orelse", "finalbody"):
            extra = getattr(node, attr, None)
            if extra is not None:
                pending.append(extra)
        for handler in getattr(node, "handlers", ()) or ():
            pending.append(handler)
        for case in getattr(node, "cases", ()) or ():
            pending.append(case)
    return out


def module_scope(module: cst.Module) -> ModuleScope:
    """The module's bindings, in statement order."""
    scope = ModuleScope()
    for index, stmt in enumerate(module.body):
        # Bindings inside if/try/for/while/with blocks may not happen: they replace nothing.
        unconditional = isinstance(stmt, (cst.SimpleStatementLine, cst.FunctionDef, cst.ClassDef))
        for name, binding in statement_bindings((stmt,)):
            scope.add_at(name, binding, index, unconditional)
        if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            for name, small in _changes_in_place((stmt,)):
                scope.changes.setdefault(name, []).append((index, small, unconditional))
    return scope


def _changes_in_place(body: Sequence[cst.CSTNode]) -> Iterator[tuple[str, cst.BaseSmallStatement]]:
    """The small statements of a block that change a name's value without rebinding it:
    `d[k] = v`, `del d[k]`, `d.method(...)` (not in nested functions or classes)."""
    for stmt in body:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                name = _changed_name(small)
                if name is not None:
                    yield name, small
        elif isinstance(stmt, cst.BaseCompoundStatement) and not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            yield from _changes_in_place(_blocks_of(stmt))


def _changed_name(small: cst.BaseSmallStatement) -> Optional[str]:
    if type(small) is cst.Assign:
        for target in small.targets:  # type: ignore[attr-defined]
            if type(target.target) is cst.Subscript and type(target.target.value) is cst.Name:
                return target.target.value.value
    elif type(small) is cst.Del:
        target = small.target  # type: ignore[attr-defined]
        if type(target) is cst.Subscript and type(target.value) is cst.Name:
            return target.value.value
    elif type(small) is cst.Expr:
        call = small.value  # type: ignore[attr-defined]
        if type(call) is cst.Call and type(call.func) is cst.Attribute and type(call.func.value) is cst.Name:
            return call.func.value.value
    return None


@dataclass
class FunctionScope(Scope):
    """A function's bindings, with its body's top-level statements that change a local name's
    value in place (`args["start_date"] = ...`), as ModuleScope.changes has them for a module."""

    # Per name: the body statement index of each binding, and of each change in place.
    places: dict[str, list[int]] = field(default_factory=dict, repr=False)
    changes: dict[str, list[tuple[int, cst.CSTNode, bool]]] = field(default_factory=dict, repr=False)


def function_scope(func: cst.FunctionDef, parent: Scope) -> Scope:
    """A function's bindings: its parameters (opaque) and its body's bindings. The body runs
    when called, after the module's statements: it sees every module binding."""
    scope = FunctionScope(parent=parent.whole)
    params = func.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        scope.add(param.name.value, OPAQUE)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            scope.add(star.name.value, OPAQUE)
    body = func.body.body if isinstance(func.body, cst.IndentedBlock) else (func.body,)
    for index, stmt in enumerate(body):
        for name, binding in statement_bindings((stmt,)):
            scope.add(name, binding)
            scope.places.setdefault(name, []).append(index)
        if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            unconditional = isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
            for name, small in _changes_in_place((stmt,)):
                scope.changes.setdefault(name, []).append((index, small, unconditional))
    return scope
