"""Which files cannot matter to any rule, so that libcst never parses them.

Every rule starts from a DAG, and a DAG is reached through Airflow's names or a project module
(a factory, a wrapper class): a file qualifies for skipping only when its text names neither
`airflow` nor `dag` in any case, the CPython precheck accepts it (so a syntax error or an
expression too deep for libcst is still DG000), and it imports nothing but the standard
library (so it cannot call a project factory whose name hides the DAG). Comments and strings
count as text: a mention anywhere keeps the file, which errs on the side of checking.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Union

from dagguard.engine.precheck import Precheck

_DAG_TEXT = re.compile(rb"airflow|dag", re.IGNORECASE)


def mentions_a_dag(source: Union[bytes, str]) -> bool:
    """Does the text name `airflow` or `dag` anywhere, in any case? The cheap first test."""
    data = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    return _DAG_TEXT.search(data) is not None


def cannot_touch_a_dag(checked: Precheck) -> bool:
    """True when a file that does not mention a DAG, with CPython's verdict `checked`, is valid
    Python that can neither define nor reach an Airflow DAG."""
    if checked.error is not None or checked.tree is None:
        return False  # a syntax error or a file too deep for libcst: its DG000 stands
    return imports_only_the_standard_library(checked.tree)


def imports_only_the_standard_library(tree: ast.AST) -> bool:
    return all(_imports_only_the_standard_library(node) for node in ast.walk(tree)
               if isinstance(node, (ast.Import, ast.ImportFrom)))


def _imports_only_the_standard_library(node: Union[ast.Import, ast.ImportFrom]) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and _is_standard(node.module or "")
    return all(_is_standard(alias.name) for alias in node.names)


def _is_standard(module: str) -> bool:
    return module.partition(".")[0] in sys.stdlib_module_names
