"""imported_modules reads CPython's tree when the precheck made one (issue 25's speed work): it
must name the same modules as the walk over libcst's tree, in every kind of block."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst

from dagguard.model.dags.unseen_dags import imported_modules

SOURCE = """\
import os, a.b.c as abc
from x.y import z, w as v
from . import sibling
from ..pkg.mod import thing
from ... import far
from .rel import *
from star import *

def task():
    import inside_function
    class Local:
        from in_class import name
    return 1

if True:
    import in_if
elif False:
    import in_elif
else:
    import in_else
try:
    import in_try
except ImportError:
    import in_except
else:
    import in_try_else
finally:
    import in_finally
for _ in ():
    import in_for
else:
    import in_for_else
while False:
    import in_while
with open("f") as f:
    import in_with
match 1:
    case 1:
        import in_match
async def run():
    async with x:
        import in_async_with
    async for _ in y:
        import in_async_for
"""


def test_cpython_tree_and_libcst_tree_give_the_same_imports(tmp_path: Path) -> None:
    path = tmp_path / "pkg" / "sub" / "dag.py"
    path.parent.mkdir(parents=True)
    from_libcst = imported_modules(cst.parse_module(SOURCE), path)
    from_cpython = imported_modules(cst.parse_module(SOURCE), path, ast.parse(SOURCE))
    assert from_cpython == from_libcst
    assert {"os", "a.b.c", "x.y", "x.y.z", "x.y.w", "star", "in_class", "in_match", "in_async_for",
            "in_finally", str(tmp_path / "pkg" / "sub" / "sibling"), str(tmp_path / "pkg" / "pkg" / "mod" / "thing"),
            str(tmp_path / "far"), str(tmp_path / "pkg" / "sub" / "rel")} <= from_libcst
