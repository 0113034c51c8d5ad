"""DG301: metadata-database or external reads in code that runs at every DAG-file parse."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from dagguard.model.dags import FileModel, ParseTimeCall
from dagguard.model.scope import ConstantBinding, Scope
from dagguard.rules.base import Report, Rule, RuleContext

VARIABLE_METHODS = frozenset({"get", "get_variable_from_secrets"})
CONNECTION_METHODS = frozenset({"get_connection_from_secrets", "get", "get_connection"})
HOOK_QUERIES = frozenset({
    "get_records", "get_first", "get_pandas_df", "get_df", "run", "get_conn", "get_connection",
    "get_uri", "test_connection",
})


def _airflow_class(qual: Optional[str], suffix: str) -> bool:
    return bool(qual) and qual.startswith("airflow.") and qual.rsplit(".", 1)[-1].endswith(suffix)  # type: ignore[union-attr]


def _hook_instance(expr: cst.BaseExpression, scope: Scope) -> bool:
    """`PostgresHook(...)` directly, or a name bound once to such a call."""
    if isinstance(expr, cst.Name):
        binding = scope.single(expr.value)
        if isinstance(binding, ConstantBinding):
            expr = binding.value
    return isinstance(expr, cst.Call) and _airflow_class(scope.qualname(expr.func), "Hook")


def describe_parse_time_read(call: ParseTimeCall) -> Optional[str]:
    """`Variable.get()` etc. when the call reads a Variable, Connection or runs a hook query."""
    func = call.node.func
    assert isinstance(func, cst.Attribute)
    method = func.attr.value
    owner = call.scope.qualname(func.value)
    if method in VARIABLE_METHODS and _airflow_class(owner, "Variable"):
        return f"Variable.{method}()"
    if method in CONNECTION_METHODS and (_airflow_class(owner, "Connection") or _airflow_class(owner, "Hook")):
        return f"{owner.rsplit('.', 1)[-1]}.{method}()"  # type: ignore[union-attr]
    if method in HOOK_QUERIES and _hook_instance(func.value, call.scope):
        return f"a hook's {method}()"
    return None


class TopLevelVariableGet(Rule):
    code = "DG301"
    name = "top-level-variable-get"
    severity = "warning"
    summary = "Variable/Connection reads or hook queries run at every parse of the DAG file"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        for call in file.parse_time_calls:
            what = describe_parse_time_read(call)
            if what is not None:
                yield Report(
                    node=call.node,
                    message=f"{what} runs at module level, on every parse of this file by the "
                            "DAG processor, and hits the metadata DB or an external system each time",
                    help='read it inside a task, or use a template such as "{{ var.value.my_key }}"',
                )
