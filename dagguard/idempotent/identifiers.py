"""Table and column names: validated as plain identifiers, then always quoted."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dagguard.idempotent.errors import InvalidIdentifierError

# Letters, digits, underscore and $ (PostgreSQL allows it after the first character); 63 is
# PostgreSQL's limit and far above anything real. Anything else, quotes and spaces included,
# is refused rather than escaped: a name that needs escaping is almost always an injection.
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$]{0,62}")


def validate_identifier(name: str, what: str = "column") -> str:
    """Return `name` if it is a plain identifier, else raise InvalidIdentifierError."""
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise InvalidIdentifierError(
            f"{what} name {name!r} is not a plain SQL identifier (letters, digits, _ and $, "
            f"starting with a letter or _, at most 63 characters)")
    return name


def quote_identifier(name: str) -> str:
    """Double-quote a validated identifier (SQLite, DuckDB and PostgreSQL all accept it)."""
    return '"' + validate_identifier(name) + '"'


@dataclass(frozen=True)
class TableName:
    """A table name of one to three dotted parts: [catalog.][schema.]table."""

    parts: tuple[str, ...]

    @classmethod
    def parse(cls, name: str) -> "TableName":
        """Split and validate a dotted table name such as `analytics.signups_daily`."""
        if not isinstance(name, str) or not name:
            raise InvalidIdentifierError(f"table name {name!r} is empty or not a string")
        parts = tuple(name.split("."))
        if len(parts) > 3:
            raise InvalidIdentifierError(f"table name {name!r} has more than three dotted parts")
        for part in parts:
            validate_identifier(part, "table")
        return cls(parts)

    @property
    def schema(self) -> str | None:
        """The part before the table name, if any."""
        return self.parts[-2] if len(self.parts) > 1 else None

    @property
    def name(self) -> str:
        """The bare table name."""
        return self.parts[-1]

    @property
    def quoted(self) -> str:
        """The name as SQL, each part quoted."""
        return ".".join(quote_identifier(part) for part in self.parts)

    def __str__(self) -> str:
        return ".".join(self.parts)


def quote_columns(columns: tuple[str, ...], prefix: str = "") -> str:
    """`"a", "b"` or, with a prefix, `s."a", s."b"`."""
    return ", ".join(prefix + quote_identifier(column) for column in columns)
