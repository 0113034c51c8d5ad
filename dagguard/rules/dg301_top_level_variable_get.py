"""DG301: metadata-database or external reads in code that runs at every DAG-file parse."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from dagguard.model.project.call_chains import CallChain, CallFollower
from dagguard.model.dags.models import FileModel, ParseTimeCall
from dagguard.model.basics.scope import ConstantBinding, Scope
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
    if not isinstance(func, cst.Attribute):
        return None
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
        helpers = CallFollower(_reads)
        for call in file.parse_time_calls:
            what = describe_parse_time_read(call)
            if what is not None:
                yield Report(
                    node=call.node,
                    message=f"{what} runs at module level, on every parse of this file by the "
                            "DAG processor, and hits the metadata DB or an external system each time",
                    help=HELP,
                )
                continue
            # A project function called here runs its body now: its reads are paid at this call.
            chains = helpers.chains(call.node, call.scope)
            if chains:
                yield Report(node=call.node, message=_chain_message(chains, context), help=HELP_CALL)


HELP = 'read it inside a task, or use a template such as "{{ var.value.my_key }}"'
HELP_CALL = 'call it inside a task, or have it return a template such as "{{ var.value.my_key }}"'


def _reads(call: cst.Call, scope: Scope) -> bool:
    return describe_parse_time_read(ParseTimeCall(call, scope)) is not None


def _chain_message(chains: list[CallChain], context: RuleContext) -> str:
    """`get_config()` (common/config.py:12) calls Variable.get("x") at parse time..."""
    chain = chains[0]
    steps = [f"`{step.name}()` ({context.place_of(step.path, step.module, step.call)})" for step in chain.steps]
    read = _shown_read(chain.found, describe_parse_time_read(ParseTimeCall(chain.found, chain.scope)) or "")
    parts = [*steps, read]
    path = f"{parts[0]} calls {parts[1]}" + "".join(f", which calls {part}" for part in parts[2:])
    others = len({id(other.found) for other in chains}) - 1   # a read reached two ways is one
    more = f" (and {others} more such read{'s' if others > 1 else ''})" if others else ""
    return (f"{path}{more} when the file is parsed: on every parse of this file the DAG processor "
            "hits the metadata DB or an external system")


def _shown_read(call: cst.Call, what: str) -> str:
    """`Variable.get("orders_table")`: the read, with its key when written as a literal."""
    first = call.args[0].value if call.args and call.args[0].keyword is None else None
    if what.endswith("()") and isinstance(first, cst.SimpleString) and len(first.value) <= 60:
        return f"{what[:-1]}{first.value})"
    return what
