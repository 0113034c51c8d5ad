"""Why a file that imports Airflow shows no DAG: the likely reason, or None for a library.

A task library, a config module, callbacks or a DagBag test import Airflow and make no DAG by
design; a file that holds DAG-construction code (`DAG(`, `@dag`, a factory call, `dag_id=`),
or lives in a `dags` folder, was probably meant to make one that the linter cannot see. The
reason names what stood in the way: `calls an imported factory the linter cannot read:
x.y.make_dag`. The file's imports are read here too, so that a run can tell a module other
files import (a library) from a DAG file.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Optional

import libcst as cst

from dagguard.model.basics.scope import Scope, dotted_name
from dagguard.model.basics.tree import child_nodes

# Text that constructs a DAG: `DAG(`, `@dag`. (A `dag_id=` keyword is judged on the tree: to
# Airflow's own API, `get_dag(dag_id=...)`, it makes nothing.)
_DAG_TEXT = re.compile(r"\bDAG\s*\(|@\s*(?:[\w.]+\.)?dag\b")
DAGS_FOLDER = "dags"
# Names of callables that make DAGs (`make_dag`, `create_dags`, `DagFactory`, `team_dag`), not
# ones that read runs or a DagBag (`get_dag_run`, `update_dag_state`).
_FACTORY_NAME = re.compile(r"(?:make|create|build|generate|gen|new|construct|define|register|setup|init)\w*dag"
                           r"|dags?$|dag_?(?:factory|builder|generator)", re.IGNORECASE)
_NOT_A_FACTORY = re.compile(r"dag_?run|dag_?bag", re.IGNORECASE)


def in_dags_folder(path: Path) -> bool:
    """Does the file live under a folder named `dags` (Airflow's DAGs folder, as the project
    index also takes it)?"""
    return DAGS_FOLDER in Path(os.path.realpath(path)).parent.parts


def unseen_reason(module: cst.Module, scope: Scope, text: str, path: Path) -> Optional[str]:
    """Why the file (which imports Airflow, defines no Airflow class and shows no DAG) shows
    none, when it looks like a DAG file; None when it looks like a library module."""
    if calls_dag_factory(module, scope):
        return None   # its DAGs are in YAML files, checked as such (engine/yaml_check.py)
    reason = _construction_reason(module, scope)
    if reason is not None:
        return reason
    if _DAG_TEXT.search(text):
        return "`DAG(` or `@dag` appears only in a string or comment"
    if in_dags_folder(path):
        # Only defs, classes and constants: a library that lives in the DAGs folder.
        called = _module_level_imported_call(module, scope)
        if called is not None:
            return f"in the DAGs folder; makes its DAG with an imported call the linter cannot read: {called}"
    return None


# dag-factory's loaders: 1.x `load_yaml_dags(globals_dict=globals(), ...)`, 0.x
# `DagFactory(path).generate_dags(globals())`.
DAG_FACTORY_LOADERS = frozenset({"dagfactory.load_yaml_dags", "dagfactory.dagfactory.load_yaml_dags",
                                 "dagfactory.DagFactory", "dagfactory.dagfactory.DagFactory"})


def calls_dag_factory(module: cst.Module, scope: Scope) -> bool:
    """Does the file call one of dag-factory's loaders (resolved through its imports)?"""
    pending: list[cst.CSTNode] = list(module.body)
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Call) and scope.qualname(node.func) in DAG_FACTORY_LOADERS:
            return True
        pending.extend(child_nodes(node))
    return False


def imported_modules(module: cst.Module, path: Path, tree: Optional[ast.Module] = None) -> frozenset[str]:
    """What the file imports: dotted names (`a.b.c` for `import a.b.c` and `from a.b import c`),
    and for a relative import the real path of the module it names, without `.py`. `tree`,
    CPython's tree of the same file when the precheck made one, is read instead of libcst's:
    walking its statements costs a tenth as much."""
    folder = Path(os.path.realpath(path)).parent
    if tree is not None:
        return _imported_in_cpython_tree(tree, folder)
    found: set[str] = set()
    pending: list[cst.CSTNode] = list(module.body)
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Import):
            found.update(dotted_name(alias.name) or "" for alias in node.names)
        elif isinstance(node, cst.ImportFrom):
            found.update(_from_import(node, folder))
        elif not isinstance(node, (cst.BaseExpression, cst.Decorator, cst.Parameters)):
            # Statements and blocks (function bodies too: a task imports its helpers where it
            # runs), not expressions.
            pending.extend(child_nodes(node))
    found.discard("")
    return frozenset(found)


def _imported_in_cpython_tree(tree: ast.Module, folder: Path) -> frozenset[str]:
    """imported_modules over CPython's tree: every import statement, in any block."""
    found: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is ast.Import:
            found.update(alias.name for alias in node.names)  # type: ignore[attr-defined]
        elif kind is ast.ImportFrom:
            names = [a.name for a in node.names if a.name != "*"]  # type: ignore[attr-defined]
            found.update(_imports_of(node.module or "", names, node.level, folder))  # type: ignore[attr-defined]
        else:
            # Only blocks hold statements: bodies, else/finally, except handlers, match cases.
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                block = getattr(node, field, None)
                if type(block) is list:
                    pending.extend(block)
    found.discard("")
    return frozenset(found)


def _from_import(node: cst.ImportFrom, folder: Path) -> set[str]:
    base = dotted_name(node.module) if node.module is not None else ""
    names = [] if isinstance(node.names, cst.ImportStar) else [dotted_name(a.name) or "" for a in node.names]
    return _imports_of(base, names, len(node.relative), folder)


def _imports_of(base: str, names: list[str], level: int, folder: Path) -> set[str]:
    """`from <level dots><base> import <names>`: the modules it may name."""
    if not level:
        return {base, *(f"{base}.{name}" for name in names if name)} if base else set()
    home = folder
    for _ in range(level - 1):
        home = home.parent
    module = home.joinpath(*base.split(".")) if base else home
    return {str(module), *(str(module / name) for name in names if name)}


class _Construction:
    """The first sign of DAG construction the model could not follow, with its reason.

    A walk over child_nodes rather than a libcst visitor: a visitor rebuilds every node it
    passes and cost as much as the parse on the files that reach here."""

    def __init__(self, module: cst.Module, scope: Scope) -> None:
        self.module = module
        self.scope = scope
        self.called: set[str] = set()
        self.dag_functions: list[str] = []
        self.reasons: list[tuple[int, str]] = []     # (priority, reason)

    def walk(self) -> None:
        # (node, enclosing function names, loops around it), popped in source order
        pending: list[tuple[cst.CSTNode, tuple[str, ...], int]] = [(self.module, (), 0)]
        while pending:
            node, functions, loops = pending.pop()
            kind = type(node)
            children = child_nodes(node)
            if kind is cst.FunctionDef:
                if any(_last_name(d.decorator) == "dag" for d in node.decorators):
                    self.dag_functions.append(node.name.value)
                functions = (*functions, node.name.value)
                children = _decorators_first(node, children)
            elif kind is cst.ClassDef:
                children = _decorators_first(node, children)
            elif kind is cst.For:
                loops += 1
            elif kind is cst.Assign:
                self.assign(node, functions, loops)
            elif kind is cst.Call:
                self.call(node, functions)
            pending.extend((child, functions, loops) for child in reversed(children))

    def assign(self, node: cst.Assign, functions: tuple[str, ...], loops: int) -> None:
        if functions:
            return   # a helper that stores what it is given in globals(): its callers make the DAGs
        for target in node.targets:
            subscript = target.target
            if isinstance(subscript, cst.Subscript) and isinstance(subscript.value, cst.Call) \
                    and _last_name(subscript.value.func) == "globals":
                where = "in a loop over globals()" if loops else "into globals()"
                self.reasons.append((0, f"builds DAGs {where}"))

    def call(self, node: cst.Call, functions: tuple[str, ...]) -> None:
        name = _last_name(node.func)
        if name is not None:
            self.called.add(name)
        qualname = self.scope.qualname(node.func)
        airflow = _is_airflow(qualname)
        if name == "DAG":
            if not airflow:
                spelled = self.module.code_for_node(node.func)
                self.reasons.append((1, f"DAG made from an unresolved name: {spelled}(...)"))
            elif functions:
                self.reasons.append((2, f"makes DAGs only inside {functions[-1]}(), which no checked "
                                        "file calls where the linter can follow it"))
            else:
                spelled = self.module.code_for_node(node.func)
                self.reasons.append((4, f"its {spelled}(...) call is where the linter does not look for DAGs "
                                        "(a class body, a comprehension, a lambda)"))
            return
        if airflow or name is None or (qualname is None and not isinstance(node.func, cst.Name)) or functions:
            return   # Airflow's own API (DagBag, get_dag), a method of a local object, or a call in a
            # function (a test helper's `check(dag_id=...)`): DAGs are made when the module runs
        passes_dag_id = any(a.keyword is not None and a.keyword.value == "dag_id" for a in node.args)
        if (passes_dag_id and qualname is not None) or (_FACTORY_NAME.search(name) and not _NOT_A_FACTORY.search(name)):
            what = qualname or self.module.code_for_node(node.func)
            kind = "an imported factory" if qualname is not None else "a factory"
            self.reasons.append((3, f"calls {kind} the linter cannot read: {what}"))

    def best(self) -> Optional[str]:
        for function in self.dag_functions:
            if function not in self.called:
                self.reasons.append((2, f"its @dag function {function}() is never called"))
        if not self.reasons:
            if self.dag_functions:
                return f"its @dag function {self.dag_functions[0]}() is called where the linter cannot follow it"
            return None
        return min(self.reasons, key=lambda item: item[0])[1]


def _construction_reason(module: cst.Module, scope: Scope) -> Optional[str]:
    construction = _Construction(module, scope)
    construction.walk()
    return construction.best()


def _decorators_first(node: cst.CSTNode, children: list[cst.CSTNode]) -> list[cst.CSTNode]:
    """A definition's children with its decorators first, in the order a visitor sees them
    (child_nodes lists them after the body)."""
    return [*node.decorators, *(c for c in children if type(c) is not cst.Decorator)]


def _module_level_imported_call(module: cst.Module, scope: Scope) -> Optional[str]:
    """`dag = build("x")` at module level: a name that says DAG, bound to what a call of a name
    imported from outside Airflow returns."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, cst.Assign) or not isinstance(small.value, cst.Call):
                continue
            names = [t.target.value for t in small.targets if isinstance(t.target, cst.Name)]
            qualname = scope.qualname(small.value.func)
            if any("dag" in n.lower() for n in names) and qualname is not None and not _is_airflow(qualname):
                return qualname
    return None


def _is_airflow(qualname: Optional[str]) -> bool:
    return qualname is not None and (qualname == "airflow" or qualname.startswith("airflow."))


def _last_name(expr: cst.BaseExpression) -> Optional[str]:
    """`make_dag` for `make_dag`, `x.y.make_dag`, `make_dag(...)` (a decorator call)."""
    if isinstance(expr, cst.Call):
        expr = expr.func
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    if isinstance(expr, cst.Name):
        return expr.value
    return None
