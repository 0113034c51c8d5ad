"""A SQL operator's `parameters=` bound into its SQL text, so the SQL checks see the values.

SQLExecuteQueryOperator renders `parameters` as a template and leaves the binding to the
driver, in the driver's placeholder style: `%(name)s` and `%s` (psycopg, MySQL drivers), `?`
(sqlite3, Trino, ODBC), `:name` and `:1` (sqlite3, Oracle). Written back into the text as the
driver quotes them, `ts < %(end)s` with `parameters={"end": "{{ data_interval_end }}"}` reads
as `ts < '{{ data_interval_end }}'`, which the interval rules understand.
"""

from __future__ import annotations

import math
import re
from typing import Any, Optional

from dagguard.model.basics.values import StaticDict

# `%%` is a literal percent sign once parameters are given; matched first so that `%%s` stays text.
_PLACEHOLDER = re.compile(r"%%|%\((\w+)\)s|%s")
# Drivers of the other styles parse the SQL: a `?` or `:x` in a quoted string or name, or in a
# comment, is text. So is one in a Jinja block, which is rendered before the driver sees it.
# A Jinja block inside a quoted string may hold quotes of its own: '{{ var.value.get('x') }}'.
# Each alternative matches a given text in one way only, and an unclosed one runs to the end
# of the text, as the SQL parser reads it: so matching stays linear however the text is cut (a
# lazy `.*?` here took minutes on an unclosed quote).
_JINJA = r"\{\{(?:[^}]|\}(?!\}))*(?:\}\}|\Z)|\{%(?:[^%]|%(?!\}))*(?:%\}|\Z)|\{#(?:[^#]|#(?!\}))*(?:#\}|\Z)"
_QUOTED = "|".join(rf"{q}(?:{_JINJA}|{q}{q}|[^{q}{{]|\{{(?![{{%#]))*(?:{q}|\Z)" for q in ("'", '"'))
_OPAQUE = rf"{_QUOTED}|--[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/|\Z)|{_JINJA}"
_QMARK = re.compile(rf"{_OPAQUE}|(\?)")
# Not `::date` (a PostgreSQL cast) nor `[1:2]` (an array slice): a colon after a name character
# or another colon is not a placeholder.
_COLON = re.compile(rf"{_OPAQUE}|(?<![\w:]):(\w+)")


def bind_parameters(sql: str, parameters: Any) -> str:
    """`sql` with each placeholder whose parameter is a static string or number replaced by
    that value as a SQL literal. Other placeholders stay as they are, and so does `sql` when
    `parameters` is not a static dict (or plain dict) or list, or a list does not match the
    placeholders it would fill."""
    if isinstance(parameters, (StaticDict, dict)):
        named = ({key: entry.value for key, entry in parameters.entries.items()}
                 if isinstance(parameters, StaticDict) else parameters)
        return _bind_pyformat(sql, named, None) if _uses_pyformat(sql) else _bind_named(sql, named)
    if isinstance(parameters, (list, tuple)):
        positional = list(parameters)
        return _bind_pyformat(sql, {}, positional) if _uses_pyformat(sql) else _bind_positional(sql, positional)
    return sql


def _uses_pyformat(sql: str) -> bool:
    return any(match.group(0) != "%%" for match in _PLACEHOLDER.finditer(sql))


def _bind_pyformat(sql: str, named: dict[str, Any], positional: Optional[list[Any]]) -> str:
    if positional is not None and sum(1 for m in _PLACEHOLDER.finditer(sql) if m.group(0) == "%s") != len(positional):
        return sql
    items = iter(positional or ())

    def bind(match: "re.Match[str]") -> str:
        text = match.group(0)
        if text == "%%":
            return "%"
        value = next(items, _MISSING) if text == "%s" else named.get(match.group(1), _MISSING)
        return _literal(value) or text

    return _PLACEHOLDER.sub(bind, sql)


def _bind_named(sql: str, named: dict[str, Any]) -> str:
    """`:name` placeholders, each bound where the dict has that name."""
    def bind(match: "re.Match[str]") -> str:
        name = match.group(1)
        return (_literal(named.get(name, _MISSING)) or match.group(0)) if name else match.group(0)

    return _COLON.sub(bind, sql)


def _bind_positional(sql: str, positional: list[Any]) -> str:
    """`?` placeholders when there are as many as items, else `:1`, `:2`... within the list."""
    if sum(1 for m in _QMARK.finditer(sql) if m.group(1)) == len(positional):
        items = iter(positional)
        return _QMARK.sub(lambda m: (_literal(next(items)) or "?") if m.group(1) else m.group(0), sql)
    numbers = [int(m.group(1)) for m in _COLON.finditer(sql) if m.group(1) and m.group(1).isdigit()]
    if not numbers or not all(1 <= n <= len(positional) for n in numbers):
        return sql

    def bind(match: "re.Match[str]") -> str:
        name = match.group(1)
        if not name or not name.isdigit():
            return match.group(0)
        return _literal(positional[int(name) - 1]) or match.group(0)

    return _COLON.sub(bind, sql)


_MISSING = object()


def _literal(value: Any) -> Optional[str]:
    """`value` as the SQL literal a driver sends for it, or None for anything else."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return None
