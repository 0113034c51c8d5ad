"""A SQL operator's `parameters=` bound into its SQL text, so the SQL checks see the values.

SQLExecuteQueryOperator renders `parameters` as a template and leaves the binding to the
driver: `%(name)s` takes a dict's value, `%s` the next item of a list. Written back into the
text as the driver quotes them, `ts < %(end)s` with `parameters={"end": "{{ data_interval_end }}"}`
reads as `ts < '{{ data_interval_end }}'`, which the interval rules understand.
"""

from __future__ import annotations

import math
import re
from typing import Any, Optional

from dagguard.model.values import StaticDict

# `%%` is a literal percent sign once parameters are given; matched first so that `%%s` stays text.
_PLACEHOLDER = re.compile(r"%%|%\((\w+)\)s|%s")


def bind_parameters(sql: str, parameters: Any) -> str:
    """`sql` with each placeholder whose parameter is a static string or number replaced by
    that value as a SQL literal. Other placeholders stay as they are, and so does `sql` when
    `parameters` is not a static dict (or plain dict) or list, or a list does not match the
    `%s` count."""
    if isinstance(parameters, (StaticDict, dict)):
        named = ({key: entry.value for key, entry in parameters.entries.items()}
                 if isinstance(parameters, StaticDict) else parameters)
        positional: list[Any] = []
    elif isinstance(parameters, (list, tuple)):
        named, positional = {}, list(parameters)
        if sum(1 for m in _PLACEHOLDER.finditer(sql) if m.group(0) == "%s") != len(positional):
            return sql
    else:
        return sql
    items = iter(positional)

    def bind(match: "re.Match[str]") -> str:
        text = match.group(0)
        if text == "%%":
            return "%"
        value = next(items, _MISSING) if text == "%s" else named.get(match.group(1), _MISSING)
        return _literal(value) or text

    return _PLACEHOLDER.sub(bind, sql)


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
