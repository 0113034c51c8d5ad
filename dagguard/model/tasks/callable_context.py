"""Where a task callable reads Airflow's context: parameters Airflow fills, `**context`,
`get_current_context()`, and the keys looked up on them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import libcst as cst

from dagguard.model.tasks.callable_tree import CallableTree
from dagguard.model.basics.context_keys import RUN_DATE_KEYS
from dagguard.model.basics.scope import ConstantBinding
from dagguard.model.basics.values import UNKNOWN

# The Airflow 2 and 3 paths; airflow.utils.context is Airflow 2's.
GET_CURRENT_CONTEXT = frozenset({
    "airflow.sdk.get_current_context", "airflow.operators.python.get_current_context",
    "airflow.providers.standard.operators.python.get_current_context",
    "airflow.decorators.get_current_context", "airflow.utils.context.get_current_context",
    "airflow.sdk.definitions.context.get_current_context",
})
# Context values bound into a query's text as the template that names them, for the interval
# rules (DG204, DG206, DG207) to read `ts < %(end)s` with `parameters={"end": data_interval_end}`.
_BOUND_CONTEXT_KEYS = frozenset({"data_interval_end"}) | RUN_DATE_KEYS
# Methods that format a bound without moving it: `logical_date.date()`.
_FORMATTING_METHODS = frozenset({"date", "isoformat", "to_date_string", "to_datetime_string", "strftime"})


@dataclass(frozen=True)
class ContextLookup:
    node: cst.CSTNode
    key: str


def parameters(function: cst.FunctionDef) -> dict[str, cst.CSTNode]:
    """The function's named parameters (positional-only, ordinary, keyword-only)."""
    params = function.params
    found: dict[str, cst.CSTNode] = {}
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        found[param.name.value] = param
    return found


class ContextReads:
    """The names that hold the context in one callable, and what is looked up on them."""

    def __init__(self, tree: CallableTree, filled: frozenset[str], is_task: bool,
                 given_context_params: Optional[frozenset[str]] = None,
                 forwarded: frozenset[str] = frozenset()) -> None:
        self.tree = tree
        # A helper's parameters are whatever its caller passes, not necessarily the context's.
        self.params = filled if is_task else frozenset()
        # `forwarded`: a helper's parameters (or its **kwargs) that its caller passes the context.
        self.names = self._context_names(given_context_params) | forwarded

    def _context_names(self, given: Optional[frozenset[str]]) -> frozenset[str]:
        """Names holding the context: **kwargs (or the parameters `given`, for a method such as
        `execute(self, context)`) and results of get_current_context()."""
        names: set[str] = set()
        star = self.tree.function.params.star_kwarg
        if given is not None:
            names |= given & set(parameters(self.tree.function))
        elif isinstance(star, cst.Param):
            names.add(star.name.value)
        for node in self.tree.nodes:
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) \
                    and self.tree.scope.resolves_to(node.value.func, GET_CURRENT_CONTEXT):
                for target in node.targets:
                    if isinstance(target.target, cst.Name):
                        names.add(target.target.value)
        return frozenset(names)

    def current_context_names(self) -> frozenset[str]:
        """The names assigned `get_current_context()`: the context wherever the code runs."""
        star = self.tree.function.params.star_kwarg
        return self.names - {star.name.value} if isinstance(star, cst.Param) else self.names

    def forwarded_to(self, call: cst.Call, function: cst.FunctionDef, sure: frozenset[str]) -> frozenset[str]:
        """The parameters of `function` that `call` passes one of the context names `sure`
        (`helper(message, context)`, `helper(ctx=context)`, `helper(**context)`)."""
        positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
        star = function.params.star_kwarg
        found: set[str] = set()
        index = 0
        for arg in call.args:
            passes = type(arg.value) is cst.Name and arg.value.value in sure  # type: ignore[attr-defined]
            if arg.star == "**":
                if passes and isinstance(star, cst.Param):
                    found.add(star.name.value)
            elif arg.star == "*":
                break   # the positions after it are unknown
            elif arg.keyword is not None:
                if passes:
                    found.add(arg.keyword.value)
            else:
                if passes and index < len(positional):
                    found.add(positional[index])
                index += 1
        return frozenset(found)

    def lookup(self, name: cst.BaseExpression) -> Optional[ContextLookup]:
        """`context["key"]` or `context.get("key")` (`name` is the context's expression)."""
        parents, evaluator = self.tree.parents, self.tree.evaluator
        parent = parents.get(id(name))
        if isinstance(parent, cst.Subscript) and parent.value is name and len(parent.slice) == 1:
            index = parent.slice[0].slice
            if isinstance(index, cst.Index):
                key = evaluator.value(index.value)
                if isinstance(key, str):
                    return ContextLookup(parent, key)
        if isinstance(parent, cst.Attribute) and parent.value is name and parent.attr.value == "get":
            call = parents.get(id(parent))
            if isinstance(call, cst.Call) and call.func is parent and call.args:
                key = evaluator.value(call.args[0].value)
                if isinstance(key, str):
                    return ContextLookup(call, key)
        return None

    def key_read(self, node: cst.CSTNode) -> Optional[str]:
        """The key `node` reads when it is itself a lookup on a context name, else None."""
        base = node.value if type(node) is cst.Subscript else (  # type: ignore[attr-defined]
            node.func.value if type(node) is cst.Call and type(node.func) is cst.Attribute else None)  # type: ignore[attr-defined]
        if type(base) is cst.Name and base.value in self.names:  # type: ignore[union-attr]
            lookup = self.lookup(base)  # type: ignore[arg-type]
            if lookup is not None and lookup.node is node:
                return lookup.key
        return None

    def is_dag_run(self, expr: cst.BaseExpression, filled: frozenset[str]) -> bool:
        """The run from the context: `context["dag_run"]`, `context.get("dag_run")`, a name
        assigned one of those, or a `dag_run` parameter Airflow fills."""
        if type(expr) is cst.Name:
            name = expr.value  # type: ignore[attr-defined]
            if name in filled:
                return name == "dag_run"
            binding = self.tree.scope.single(name)
            return isinstance(binding, ConstantBinding) and self.is_dag_run(binding.value, frozenset())
        base = expr.value if type(expr) is cst.Subscript else (  # type: ignore[attr-defined]
            expr.func.value if type(expr) is cst.Call and type(expr.func) is cst.Attribute else None)  # type: ignore[attr-defined]
        if type(base) is cst.Name and base.value in self.names:  # type: ignore[union-attr]
            lookup = self.lookup(base)  # type: ignore[arg-type]
            return lookup is not None and lookup.node is expr and lookup.key == "dag_run"
        return False

    def forwards(self, name: cst.Name) -> bool:
        """Is the context object used other than by a key lookup (passed on, iterated...)?"""
        parents = self.tree.parents
        parent = parents.get(id(name))
        if isinstance(parent, cst.Param) or (isinstance(parent, cst.AssignTarget)):
            return False
        if isinstance(parent, cst.Attribute) and parent.value is name:
            return parent.attr.value not in ("get", "keys")
        if isinstance(parent, cst.Arg):
            call = parents.get(id(parent))
            return not (isinstance(call, cst.Call) and self.tree.is_logging(call))
        return not isinstance(parent, cst.Subscript)

    def query_parameters(self, node: cst.BaseExpression) -> Any:
        """A literal dict or list of query parameters, each as the `{{ key }}` template of the
        interval bound it holds, else UNKNOWN (which keeps its placeholder)."""
        if isinstance(node, cst.Dict):
            found: dict[str, Any] = {}
            for element in node.elements:
                if not isinstance(element, cst.DictElement):
                    return None  # a ** splat: names unknown
                key = self.tree.evaluator.value(element.key)
                if isinstance(key, str):
                    found[key] = self._bound_template(element.value)
            return found
        if isinstance(node, (cst.List, cst.Tuple)):
            if any(isinstance(element, cst.StarredElement) for element in node.elements):
                return None
            return [self._bound_template(element.value) for element in node.elements]
        return None

    def _bound_template(self, node: cst.BaseExpression) -> Any:
        """`{{ data_interval_end }}` for a task parameter Airflow fills with it (never rebound in
        the body) or a lookup of it in the context, `{{ logical_date.date() }}` for it formatted;
        UNKNOWN for anything else."""
        expression = self._bound_expression(node)
        return f"{{{{ {expression} }}}}" if expression is not None else UNKNOWN

    def _bound_expression(self, node: cst.BaseExpression) -> Optional[str]:
        if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in _FORMATTING_METHODS):
            inner = self._bound_expression(node.func.value)
            # Only the method matters to the SQL rules; its format string is left out.
            return f"{inner}.{node.func.attr.value}()" if inner is not None else None
        key = None
        if isinstance(node, cst.Name):
            if node.value in self.params and len(self.tree.scope.bindings.get(node.value, ())) == 1:
                key = node.value
        else:
            base = node.value if isinstance(node, cst.Subscript) else (
                node.func.value if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) else None)
            if isinstance(base, cst.Name) and base.value in self.names:
                lookup = self.lookup(base)
                key = lookup.key if lookup is not None and lookup.node is node else None
        return key if key in _BOUND_CONTEXT_KEYS else None
