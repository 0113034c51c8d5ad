"""A Delta lake: a folder of Delta tables (`DeltaLake`) and the `delta://` URLs that name one. It
imports no deltalake; the connections (dagguard.idempotent.connections), the engine (delta.py) and
its ledger (delta_ledger.py) all take it from here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from dagguard.idempotent.errors import UnsupportedConnectionError
from dagguard.idempotent.identifiers import TableName

# Schemes of the object stores delta-rs reaches, as `delta+<scheme>://` URLs.
REMOTE_SCHEMES = ("s3", "s3a", "gs", "az", "abfs", "abfss", "file")


@dataclass(frozen=True)
class DeltaLake:
    """A folder of Delta tables: `uri` a local path or an object-store URI, `storage_options`
    passed to delta-rs as they are (credentials, region, endpoint)."""

    uri: str
    storage_options: Mapping[str, str] | None = field(default=None, compare=False, repr=False)

    def table_uri(self, table: TableName) -> str:
        """The folder of `table` (`orders` -> <uri>/orders, `sales.orders` -> <uri>/sales/orders).
        Its parts are plain identifiers, so no part can climb out of the lake."""
        return self.uri.rstrip("/") + "/" + "/".join(table.parts)

    def options(self) -> dict[str, str] | None:
        """The storage options as delta-rs takes them."""
        return dict(self.storage_options) if self.storage_options else None

    def close(self) -> None:
        """Nothing to close: delta-rs opens no connection (present so a lake passes as one)."""


def lake_from_url(url: str) -> DeltaLake:
    """`delta:///abs/path` -> the local lake /abs/path; `delta+s3://bucket/lake` -> s3://bucket/lake."""
    scheme, _, rest = url.partition("://")
    store = scheme.lower().partition("+")[2]
    if not store:
        if not rest.startswith("/"):
            raise UnsupportedConnectionError(
                f"{url!r} names no absolute path; a local lake is delta:///abs/path/lake (three slashes)")
        from urllib.parse import unquote

        return DeltaLake(unquote(rest.split("?")[0]))
    if store not in REMOTE_SCHEMES:
        raise UnsupportedConnectionError(
            f"unsupported Delta Lake store {store!r} in {url!r}; use delta:///path, "
            f"{', '.join(f'delta+{s}://' for s in REMOTE_SCHEMES[:-1])}")
    return DeltaLake(f"{store}://{rest}")
