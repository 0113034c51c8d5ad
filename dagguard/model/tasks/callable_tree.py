"""One task callable's body, indexed once: its nodes in source order, each node's parent, and
the small questions every analysis of it asks (is this call logging, what text is this)."""

from __future__ import annotations

import hashlib
from typing import Iterator, Optional

import libcst as cst

from dagguard.model.basics.scope import Scope
from dagguard.model.basics.tree import child_nodes
from dagguard.model.basics.values import Evaluator, simple_string_value

_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})


class CallableTree:
    """The body of `function`, walked once in pre-order (source order matters: DELETE before
    INSERT), with parents recorded for walking up from a value."""

    def __init__(self, function: cst.FunctionDef, scope: Scope, module: cst.Module,
                 names: Optional[dict[str, str]] = None) -> None:
        self.function = function
        self.scope = scope
        self.module = module
        self.names = names
        self.evaluator = Evaluator(scope)
        self.parents: dict[int, cst.CSTNode] = {}
        self.nodes: list[cst.CSTNode] = []
        stack: list[cst.CSTNode] = [function.body]
        while stack:
            node = stack.pop()
            self.nodes.append(node)
            children = child_nodes(node)
            for child in children:
                self.parents[id(child)] = node
            stack.extend(reversed(children))

    def uses(self, name: str) -> Iterator[cst.Name]:
        """Reads of `name` in the body (not the assignments to it)."""
        for node in self.nodes:
            if isinstance(node, cst.Name) and node.value == name:
                parent = self.parents.get(id(node))
                if isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.AnnAssign, cst.AugAssign))
                                                             and parent.target is node):
                    continue
                # `datetime.now` and `f(now=...)` spell the name without reading the variable.
                if (isinstance(parent, cst.Attribute) and parent.attr is node) \
                        or (isinstance(parent, cst.Arg) and parent.keyword is node):
                    continue
                yield node

    def is_logging(self, call: cst.Call) -> bool:
        """`print(...)`, `logging.info(...)`, `log.warning(...)`, `self.log.info(...)`."""
        func = call.func
        if isinstance(func, cst.Name):
            return func.value == "print" and not self.scope.lookup("print")
        if isinstance(func, cst.Attribute) and func.attr.value in _LOG_METHODS:
            qual = self.scope.qualname(func)
            if qual is not None and qual.startswith("logging."):
                return True
            owner = func.value
            while isinstance(owner, cst.Attribute):
                if "log" in owner.attr.value.lower():
                    return True
                owner = owner.value
            return isinstance(owner, cst.Name) and "log" in owner.value.lower()
        return False

    def static_text(self, node: cst.BaseExpression) -> Optional[str]:
        """A string's value, or an f-string's text with placeholders; None otherwise."""
        value = self.evaluator.value(node)
        if isinstance(value, str):
            return value
        return formatted_text(node, self.scope, self.module, self.names)


def argument(call: cst.Call, position: int, keywords: tuple[str, ...]) -> Optional[cst.Arg]:
    """The call's argument at `position` or named one of `keywords`; None after a `*`/`**`."""
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value in keywords:
                return arg
        else:
            if index == position:
                return arg
            index += 1
    return None


def call_name(call: cst.Call) -> str:
    """`datetime.now()`: the call as written, without its arguments."""
    parts: list[str] = []
    expr: cst.BaseExpression = call.func
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
    return ".".join(reversed(parts)) + "()"


def placeholder(code: str) -> str:
    """The placeholder identifier standing for the Python expression `code` in a text."""
    return "__dgt_" + hashlib.sha1(code.encode("utf-8")).hexdigest()[:10] + "__"


def formatted_text(node: cst.BaseExpression, scope: Scope, module: cst.Module,
                   names: Optional[dict[str, str]] = None) -> Optional[str]:
    """An f-string's text (directly, through a module constant, or concatenated) with each
    `{expr}` replaced by a placeholder derived from expr; None for anything else. `names`
    collects placeholder -> "{expr}" for messages."""
    if isinstance(node, cst.Name):
        found = scope.constant(node.value)
        if found is None:
            return None
        node, scope = found
    if isinstance(node, cst.ConcatenatedString):
        left = formatted_text(node.left, scope, module, names)
        right = formatted_text(node.right, scope, module, names)
        return None if left is None or right is None else left + right
    if isinstance(node, cst.SimpleString):
        value = simple_string_value(node)
        return value if isinstance(value, str) else None
    if not isinstance(node, cst.FormattedString):
        return None
    out: list[str] = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            out.append(part.value.replace("{{", "{").replace("}}", "}"))
        elif isinstance(part, cst.FormattedStringExpression):
            code = module.code_for_node(part.expression)
            token = placeholder(code)
            if names is not None:
                names[token] = "{" + code + "}"
            out.append(token)
        else:
            return None
    return "".join(out)
