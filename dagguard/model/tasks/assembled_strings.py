"""A string a task argument builds in Python from pieces, read with its unknown parts as
placeholders: `"{{ execution_date.replace(" + x + ").isoformat() }}"`, f-strings, `%` and
`.format(...)`, through module constants of the file and of the project.

The known pieces are joined with a neutral placeholder identifier (the one `formatted_text`
makes for an f-string's expression) for each unknown part, so that Jinja's parser reads the
template the pieces spell whatever the unknown parts hold. The literal pieces written in the
checked file are kept, so that a finding points at the piece holding what it reports.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Any, Optional

import libcst as cst

from dagguard.model.tasks.callable_tree import placeholder
from dagguard.model.basics.scope import Scope
from dagguard.model.basics.values import MAX_DEPTH, Evaluator, simple_string_value


@dataclass(frozen=True)
class Piece:
    """A string literal of the checked file that is part of the assembled text."""

    node: cst.CSTNode
    text: str                        # its value
    in_argument: bool                # written in the argument itself, not in a constant it names


# Where a part is written: in the argument itself, in a constant of the checked file, elsewhere.
_ARGUMENT, _CONSTANT, _ELSEWHERE = 2, 1, 0


@dataclass(frozen=True)
class AssembledText:
    text: str                        # the whole, unknown parts as placeholders
    pieces: tuple[Piece, ...]
    partial: bool                    # some part is unknown


# printf-style conversions: %s, %(name)s, %05.2f ... (and %% for a percent sign).
_PERCENT = re.compile(r"%(?:\((?P<key>[^)]*)\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?(?P<kind>[diouxXeEfFgGcrsa%])")


def assembled_text(node: cst.BaseExpression, scope: Scope, module: cst.Module) -> Optional[AssembledText]:
    """The text `node` builds with placeholders for its unknown parts; None when no part of it
    is a string literal (nothing known to read)."""
    builder = _Builder(module, _root(scope))
    text = builder.text(node, scope, _ARGUMENT, 0)
    if text is None or not builder.pieces:
        return None
    return AssembledText(text, tuple(builder.pieces), builder.partial)


class _Builder:
    def __init__(self, module: cst.Module, root: Scope) -> None:
        self.module = module
        self.root = root
        self.pieces: list[Piece] = []
        self.partial = False

    def unknown(self, node: cst.CSTNode) -> str:
        self.partial = True
        return placeholder(self.module.code_for_node(node))

    def text(self, node: cst.BaseExpression, scope: Scope, home: int, depth: int) -> Optional[str]:
        """The text of a string-valued expression; None when it is not one that can be read."""
        if depth > MAX_DEPTH:
            return None
        kind = type(node)
        if kind is cst.SimpleString:
            value = simple_string_value(node)  # type: ignore[arg-type]
            if not isinstance(value, str):
                return None
            if home != _ELSEWHERE:
                self.pieces.append(Piece(node, value, home == _ARGUMENT))
            return value
        if kind is cst.ConcatenatedString:
            left = self.text(node.left, scope, home, depth + 1)  # type: ignore[attr-defined]
            right = self.text(node.right, scope, home, depth + 1)  # type: ignore[attr-defined]
            return None if left is None or right is None else left + right
        if kind is cst.FormattedString:
            return self._formatted(node, scope, home, depth)  # type: ignore[arg-type]
        if kind is cst.Name:
            found = scope.constant(node.value)  # type: ignore[attr-defined]
            if found is None:
                return None
            expr, where = found
            return self.text(expr, where, _CONSTANT if home and _root(where) is self.root else _ELSEWHERE, depth + 1)
        if kind is cst.BinaryOperation:
            return self._binary(node, scope, home, depth)  # type: ignore[arg-type]
        if kind is cst.Call:
            return self._format_call(node, scope, home, depth)  # type: ignore[arg-type]
        return None

    def part(self, node: cst.BaseExpression, scope: Scope, home: int, depth: int) -> str:
        """A part of a string: its text when readable, its static value, else a placeholder."""
        text = self.text(node, scope, home, depth + 1)
        if text is not None:
            return text
        value = Evaluator(scope).value(node)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value)
        return self.unknown(node)

    def _binary(self, node: cst.BinaryOperation, scope: Scope, home: int, depth: int) -> Optional[str]:
        if isinstance(node.operator, cst.Add):
            left = self.text(node.left, scope, home, depth + 1)
            right = self.text(node.right, scope, home, depth + 1)
            if left is None and right is None:
                return None   # no string literal on either side: maybe no string at all
            return (left if left is not None else self.part(node.left, scope, home, depth)) + \
                (right if right is not None else self.part(node.right, scope, home, depth))
        if isinstance(node.operator, cst.Modulo):
            template = self.text(node.left, scope, home, depth + 1)
            if template is None:
                return None
            return self._percent(template, node.right, scope, home, depth)
        return None

    def _percent(self, template: str, right: cst.BaseExpression, scope: Scope, home: int, depth: int) -> str:
        """`template % right`: each conversion becomes its value, or a placeholder."""
        positional: list[cst.BaseExpression] = []
        named: dict[str, cst.BaseExpression] = {}
        if isinstance(right, cst.Tuple):
            positional = [e.value for e in right.elements if not isinstance(e, cst.StarredElement)]
        elif isinstance(right, cst.Dict):
            named = {key: e.value for e in right.elements if isinstance(e, cst.DictElement)
                     and isinstance(key := Evaluator(scope).value(e.key), str)}
        else:
            positional = [right]
        counter = iter(range(len(template)))

        def convert(match: re.Match[str]) -> str:
            if match.group("kind") == "%":
                return "%"
            key = match.group("key")
            if key is not None:
                value = named.get(key)
            else:
                index = next(counter)
                value = positional[index] if index < len(positional) else None
            if value is None:
                self.partial = True
                return placeholder(match.group(0))
            return self.part(value, scope, home, depth)

        return _PERCENT.sub(convert, template)

    def _format_call(self, node: cst.Call, scope: Scope, home: int, depth: int) -> Optional[str]:
        """`"...{}...".format(a, b=...)`: each field becomes its argument's text, or a placeholder."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "format"):
            return None
        template = self.text(func.value, scope, home, depth + 1)
        if template is None:
            return None
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        named = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        starred = any(a.star for a in node.args)
        try:
            fields = list(string.Formatter().parse(template))
        except ValueError:
            return None
        out: list[str] = []
        auto = 0
        for literal, field, _spec, _conversion in fields:
            out.append(literal)
            if field is None:
                continue
            value: Any = None
            simple = field.isidentifier() or field.isdecimal() or field == ""
            if simple and not starred:
                if field == "":
                    value = positional[auto] if auto < len(positional) else None
                    auto += 1
                elif field.isdecimal():
                    index = int(field)
                    value = positional[index] if index < len(positional) else None
                else:
                    value = named.get(field)
            if value is None:
                self.partial = True
                out.append(placeholder("{" + field + "}"))
            else:
                out.append(self.part(value, scope, home, depth))
        return "".join(out)

    def _formatted(self, node: cst.FormattedString, scope: Scope, home: int, depth: int) -> Optional[str]:
        if "b" in node.prefix.lower():
            return None
        raw = "r" in node.prefix.lower()
        out: list[str] = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                text = part.value.replace("{{", "{").replace("}}", "}")
                if "\\" in text and not raw:
                    return None   # escapes: not decoded by hand
                out.append(text)
            elif isinstance(part, cst.FormattedStringExpression):
                if part.conversion is not None or part.format_spec is not None:
                    out.append(self.unknown(part.expression))
                else:
                    out.append(self.part(part.expression, scope, home, depth))
            else:
                return None
        if home != _ELSEWHERE:
            # The f-string's own text is a piece; its literal parts are not SimpleStrings.
            self.pieces.append(Piece(node, "".join(out), home == _ARGUMENT))
        return "".join(out)


def _root(scope: Scope) -> Scope:
    while scope.parent is not None:
        scope = scope.parent
    return scope.whole


