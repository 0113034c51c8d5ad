"""DAGs the scheduler never schedules by themselves, whatever their schedule says: SubDAGs
(model/dags/subdags.py), and DAGs built inside a pytest test or fixture.

A DAG written in a function's body exists only once something calls the function. The model
takes such DAGs for real ones, because a factory's callers may be in other modules. A test is
the one kind of function whose caller is known: pytest, never the DAG processor. So a DAG is
made in a test when a function around it is

- a test function or a setup hook of a test module: named `test...` (or `setUp`,
  `setup_method` and the like), at module level or in a class, in a file pytest collects
  (`test_*.py`, `*_test.py`, `conftest.py`) or under a `tests`/`test` folder;
- or a pytest fixture (`@pytest.fixture`, resolved through the imports), in any file;

and nothing in the file's parse-time code calls that function by its name. A DAG written at
module level in a test-named file is a DAG like any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import libcst as cst

from dagguard.model.dags.models import DagModel, FileModel
from dagguard.model.basics.scope import Scope
from dagguard.model.dags.subdags import is_subdag
from dagguard.model.basics.tree import child_nodes
from dagguard.model.basics.values import decorator_target

FIXTURE_DECORATORS = frozenset({"pytest.fixture", "pytest_asyncio.fixture"})
# Methods pytest and unittest call around the tests of a module or class.
_SETUP_HOOKS = frozenset({
    "setUp", "setUpClass", "setup_method", "setup_class", "setup_function", "setup_module", "setup",
    "asyncSetUp",
})
_TEST_FOLDERS = frozenset({"tests", "test"})
_KEY = "dags_made_in_tests"


def never_scheduled(file: FileModel, dag: DagModel, path: Path, root: Path) -> bool:
    """Is the DAG run only by something else (a parent's SubDagOperator, a test), never by the
    scheduler on its own schedule? `path` is the file's, `root` the project's folder."""
    return is_subdag(file, dag) or made_in_a_test(file, dag, path, root)


def made_in_a_test(file: FileModel, dag: DagModel, path: Path, root: Path) -> bool:
    """Is the DAG built inside a pytest test or fixture that the file never calls itself?"""
    if dag.scope.parent is None:
        return False  # made at module level: the DAG processor makes it
    found: Optional[frozenset[int]] = file.analyses.get(_KEY)
    if found is None:
        found = file.analyses[_KEY] = _dags_in_tests(file, is_test_module(path, root))
    return id(dag.report_node) in found


def is_test_module(path: Path, root: Path) -> bool:
    """A file pytest collects by default, or one in a tests folder of the project (folders
    above the project's own do not count)."""
    name = path.name
    if name == "conftest.py" or (name.startswith("test_") and name.endswith(".py")) or name.endswith("_test.py"):
        return True
    try:
        folders = path.resolve().parent.relative_to(root.resolve()).parts
    except (OSError, ValueError):
        folders = () if path.is_absolute() else path.parent.parts
    return any(part in _TEST_FOLDERS for part in folders)


def _dags_in_tests(file: FileModel, test_module: bool) -> frozenset[int]:
    """The DAGs (by report node) made inside one of the file's tests, found in one walk."""
    dag_nodes = {id(dag.report_node): dag for dag in file.dags if dag.scope.parent is not None}
    if not dag_nodes:
        return frozenset()
    called = _names_called_at_parse_time(file.module)
    found: set[int] = set()
    # (node, is it inside a test, may a function here be a test: at module level or in a class)
    stack: list[tuple[cst.CSTNode, bool, bool]] = [(stmt, False, True) for stmt in file.module.body]
    while stack:
        node, inside, test_level = stack.pop()
        if id(node) in dag_nodes and inside:
            found.add(id(node))
        if isinstance(node, cst.FunctionDef):
            is_test = node.name.value not in called and (
                (test_level and test_module and _named_like_a_test(node.name.value))
                or _is_fixture(node, file.scope))
            stack.extend((d, inside, False) for d in node.decorators)
            stack.append((node.body, inside or is_test, False))
            continue
        stack.extend((child, inside, test_level and isinstance(node, (cst.ClassDef, cst.IndentedBlock)))
                     for child in child_nodes(node))
    return frozenset(found)


def _named_like_a_test(name: str) -> bool:
    return name.startswith("test") or name in _SETUP_HOOKS


def _is_fixture(function: cst.FunctionDef, scope: Scope) -> bool:
    """`@pytest.fixture`, `@pytest.fixture(scope="module")`, `@fixture` imported from pytest."""
    return any(scope.resolves_to(decorator_target(d), FIXTURE_DECORATORS) for d in function.decorators)


def _names_called_at_parse_time(module: cst.Module) -> frozenset[str]:
    """The names the module's own code calls when it is imported (`name()`, `x.name()`),
    outside function bodies and lambdas, which run later if at all."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = list(module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.FunctionDef):
            stack.extend(d.decorator for d in node.decorators)
            continue
        if isinstance(node, cst.Lambda):
            continue
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Name):
                found.add(func.value)
            elif isinstance(func, cst.Attribute):
                found.add(func.attr.value)
        stack.extend(child_nodes(node))
    return frozenset(found)

