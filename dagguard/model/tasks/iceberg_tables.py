"""pyiceberg tables in a task callable: which expression is a `Table` a catalog loaded, so that
`tbl.append(df)` is known to be Iceberg's append and a list's `.append(x)` never is.

A table is recognised only through its catalog, resolved through the file's imports:
`load_catalog(...).load_table("ns.t")`, a catalog class (`SqlCatalog(...)`, `RestCatalog(...)`...)
and the names the callable or the module binds to either, once each. Anything else (a
parameter, a table passed in, a name bound twice) is unknown, and unknown is not Iceberg.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from dagguard.model.basics.scope import Scope

_CATALOG_MAKERS = frozenset({
    "pyiceberg.catalog.load_catalog",
    "pyiceberg.catalog.sql.SqlCatalog", "pyiceberg.catalog.rest.RestCatalog",
    "pyiceberg.catalog.glue.GlueCatalog", "pyiceberg.catalog.hive.HiveCatalog",
    "pyiceberg.catalog.dynamodb.DynamoDbCatalog", "pyiceberg.catalog.memory.InMemoryCatalog",
    "pyiceberg.catalog.bigquery_metastore.BigQueryMetastoreCatalog",
})
# Catalog methods that return a Table (Catalog.load_table(identifier), create_table(identifier,
# schema), ...): their first argument is the table's identifier.
_TABLE_GETTERS = frozenset({"load_table", "create_table", "create_table_if_not_exists", "register_table"})
_MAX_HOPS = 4   # names followed to their value: `tbl = cat.load_table(...)`, `cat = load_catalog()`


def iceberg_table_call(expr: cst.BaseExpression, scope: Scope) -> Optional[cst.Call]:
    """The catalog call (`catalog.load_table("ns.t")`) that `expr` is the result of, followed
    through names bound once; None when `expr` is not known to be an Iceberg table."""
    found = _followed(expr, scope)
    if found is None:
        return None
    expr, scope = found
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value in _TABLE_GETTERS and _is_catalog(expr.func.value, scope):
        return expr
    return None


def _is_catalog(expr: cst.BaseExpression, scope: Scope) -> bool:
    found = _followed(expr, scope)
    if found is None:
        return False
    expr, scope = found
    return isinstance(expr, cst.Call) and scope.resolves_to(expr.func, _CATALOG_MAKERS)


def _followed(expr: cst.BaseExpression, scope: Scope) -> Optional[tuple[cst.BaseExpression, Scope]]:
    """`expr`, or the value the name `expr` is bound to once (in the callable or the module),
    followed up to _MAX_HOPS names."""
    for _ in range(_MAX_HOPS):
        if not isinstance(expr, cst.Name):
            return expr, scope
        bound = scope.constant(expr.value)
        if bound is None:
            return None
        expr, scope = bound
    return None
