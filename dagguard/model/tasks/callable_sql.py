"""SQL text a task callable hands to a hook, cursor or SQLAlchemy connection, with its bound
parameters read where they are interval bounds."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from dagguard.model.sql.built_strings import builds_text
from dagguard.model.tasks.callable_context import ContextReads
from dagguard.model.tasks.callable_tree import CallableTree, argument
from dagguard.model.sql.sql_parameters import bind_parameters

# SQLAlchemy's wrapper for textual SQL, at the paths it is imported from.
SQLALCHEMY_TEXT = frozenset({"sqlalchemy.text", "sqlalchemy.sql.text", "sqlalchemy.sql.expression.text"})
# Methods whose first argument is SQL text.
SQL_METHODS = frozenset({
    "execute", "executemany", "run", "get_records", "get_first", "get_pandas_df", "get_df",
    "get_pandas_df_by_chunks", "get_df_by_chunks", "copy_expert", "read_sql", "read_sql_query",
    "query",
    "sql",  # SparkSession.sql(sqlQuery): Spark SQL, the text still has to read as SQL
})
_SQL_START = re.compile(
    r"^\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*(select|with|insert|update|delete|merge|copy|create|drop|"
    r"truncate|alter|replace|upsert|call|begin|set|grant|use|unload|show|describe|explain|values)\b",
    re.IGNORECASE | re.DOTALL,
)
# Methods whose second positional argument is the query's parameters (DB-API cursors, DbApiHook
# readers); elsewhere only a `parameters=`/`params=` keyword is.
_POSITIONAL_PARAMETERS = frozenset({"execute", "executemany", "get_records", "get_first",
                                    "get_pandas_df", "get_df"})
# Methods that run a statement in order with the others even when its text is not static.
_ORDERED_METHODS = ("execute", "executemany", "run")


@dataclass(frozen=True)
class SqlCall:
    """SQL text handed to a hook or cursor, in source order; text None when not static."""

    node: cst.CSTNode
    text: Optional[str]
    # Text None, but a string built at run time (`.format`, `%`, `+`): SQL on unknown tables.
    built: bool = False


def sql_call(tree: CallableTree, context: ContextReads, call: cst.Call) -> Optional[SqlCall]:
    """The SQL a `hook.run(...)`, `cursor.execute(...)`, `pd.read_sql(...)` call runs."""
    func = call.func
    method = func.attr.value if isinstance(func, cst.Attribute) else None
    if method is None or method not in SQL_METHODS:
        return None
    arg = argument(call, 0, ("sql", "query", "operation", "sqlQuery"))
    if arg is None:
        return None
    statement = _unwrapped_text(tree, arg.value)
    text = tree.static_text(statement)
    if text is None:
        # A non-static statement only matters where statement order is tracked.
        return SqlCall(statement, None, builds_text(statement, tree.scope)) if method in _ORDERED_METHODS else None
    if not _SQL_START.match(text):
        return None
    bound = argument(call, 1 if method in _POSITIONAL_PARAMETERS else -1, ("parameters", "params"))
    if bound is not None:
        text = bind_parameters(text, context.query_parameters(bound.value))
    return SqlCall(statement, text)


def _unwrapped_text(tree: CallableTree, node: cst.BaseExpression) -> cst.BaseExpression:
    """The SQL inside SQLAlchemy's `text("...")`, which Session.execute and Connection.execute
    take; `node` itself otherwise."""
    if (isinstance(node, cst.Call) and node.args and node.args[0].keyword is None
            and tree.scope.qualname(node.func) in SQLALCHEMY_TEXT):
        return node.args[0].value
    return node
