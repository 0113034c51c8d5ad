"""Iceberg catalog URLs: `iceberg+<SQLAlchemy URL>` names a pyiceberg SQL catalog, and
`iceberg+rest://` (`iceberg+rests://` for https) a REST catalog; the query's parameters are
the catalog's properties (`warehouse=file:///...`), `catalog=` its name (`default`).

    iceberg+sqlite:////abs/catalog.db?warehouse=file:///abs/warehouse
    iceberg+postgresql://user@host/db?warehouse=s3://bucket/wh
    iceberg+rest://localhost:8181?warehouse=wh
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote

from dagguard.idempotent.errors import ConnectionFailedError, UnsupportedConnectionError

DEFAULT_CATALOG = "default"


def catalog_properties(url: str) -> tuple[str, dict[str, str]]:
    """(catalog name, pyiceberg load_catalog properties) of an iceberg+... URL."""
    scheme, _, rest = url.partition("://")
    inner = scheme.split("+", 1)[1].lower() if "+" in scheme else ""
    if not inner:
        raise UnsupportedConnectionError(
            f"{url!r} names no Iceberg catalog; use iceberg+sqlite:///catalog.db?warehouse=file:///..., "
            f"iceberg+postgresql://... or iceberg+rest://host:port")
    address, _, query = rest.partition("?")
    properties = dict(parse_qsl(query, keep_blank_values=True))
    name = properties.pop("catalog", DEFAULT_CATALOG)
    if inner in ("rest", "rests"):
        properties.update(type="rest", uri=f"{'https' if inner == 'rests' else 'http'}://{address}")
    else:
        if inner in ("postgresql", "postgres"):
            inner = "postgresql+psycopg"  # psycopg 3, which the postgres extra installs
        properties.update(type="sql", uri=f"{inner}://{address}")
    return name, properties


def open_catalog(url: str, read_only: bool = False) -> Any:
    """The pyiceberg Catalog a URL names. An SQLite catalog file must exist: a mistyped path
    would otherwise become a new, empty catalog."""
    from pyiceberg.catalog import load_catalog

    name, properties = catalog_properties(url)
    uri = properties["uri"]
    if uri.startswith("sqlite://"):
        rest = uri[len("sqlite://"):]
        path = unquote(rest[1:] if rest.startswith("/") else rest)
        if not path or not Path(path).is_file():
            raise ConnectionFailedError(
                f"no Iceberg SQL catalog at {path or uri!r} (from {url}); create the catalog and its tables "
                f"with pyiceberg first (SqlCatalog(...).create_table)")
    del read_only  # a pyiceberg catalog has no read-only mode; reading the ledger writes nothing
    return load_catalog(name, **properties)
