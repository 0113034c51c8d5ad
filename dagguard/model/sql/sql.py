"""SQL text of a task, split into statements and parsed by sqlglot (imported on first use).

A statement sqlglot cannot parse keeps `tree=None`: SQL-level facts skip it, and facts that
depend on statement order (was the table cleared before this INSERT?) stop being certain.
Token-level facts (wall-clock functions) still come from sqlglot's tokenizer.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from sqlglot import exp

# The task arguments that hold SQL.
SQL_ARGUMENTS = ("sql", "query", "hql", "select_query", "sql_query", "source_sql")
# Operator packages whose SQL is in a known dialect: tried after sqlglot's default dialect.
_DIALECT_HINTS = (
    ("snowflake", "snowflake"), ("google", "bigquery"), ("mysql", "mysql"), ("postgres", "postgres"),
    ("mssql", "tsql"), ("microsoft", "tsql"), ("databricks", "databricks"), ("trino", "trino"),
    ("presto", "presto"), ("redshift", "redshift"), ("amazon", "redshift"), ("oracle", "oracle"),
    ("hive", "hive"), ("spark", "spark"), ("sqlite", "sqlite"), ("vertica", "postgres"),
    ("exasol", "postgres"), ("teradata", "teradata"), ("duckdb", "duckdb"), ("clickhouse", "clickhouse"),
)
_PYFORMAT = re.compile(r"%(?:\((\w+)\))?s")
_WALL_CLOCK_TOKENS = frozenset({"CURRENT_DATE", "CURRENT_TIMESTAMP", "CURRENT_DATETIME", "LOCALTIMESTAMP",
                                "SYSDATE", "SYSTIMESTAMP"})
_WALL_CLOCK_CALLS = frozenset({"NOW", "GETDATE", "GETUTCDATE", "SYSDATETIME", "CURRENT_DATE",
                               "CURRENT_TIMESTAMP", "SYSDATE", "SYSTIMESTAMP", "LOCALTIMESTAMP"})


@dataclass(frozen=True)
class Statement:
    """One SQL statement: its text, its sqlglot tree (None when unparseable), its clock reads."""

    text: str
    tree: Optional["exp.Expression"]
    wall_clock: tuple[str, ...]


@dataclass(frozen=True)
class ParsedSql:
    statements: tuple[Statement, ...]

    @property
    def fully_parsed(self) -> bool:
        return all(s.tree is not None for s in self.statements)


def dialect_for(operator: Optional[str]) -> Optional[str]:
    """The SQL dialect an operator's provider package implies, if any."""
    if not operator:
        return None
    parts = operator.lower().split(".")
    for needle, dialect in _DIALECT_HINTS:
        if needle in parts:
            return dialect
    return None


def parse_sql(text: str, dialect: Optional[str] = None) -> ParsedSql:
    """Split `text` into statements and parse each; never raises on bad SQL."""
    # DB-API parameters (%(name)s, %s) are values bound at run time: make them identifiers.
    text = _PYFORMAT.sub(lambda m: f"__dgp_{m.group(1) or ''}__", text)
    split = _split(text, dialect)
    if split is None:
        return ParsedSql((Statement(text, None, ()),))
    chunks, tokenized_with = split
    statements = []
    in_routine = False
    for chunk, tokens in chunks:
        # A routine's body runs when it is called, and splitting on ';' cut it into pieces:
        # its clock reads are not this task's.
        in_routine = in_routine or _defines_routine(tokens)
        # A comment at either end of a statement is its own in the whole text's tokens (the one
        # on the line before it, say), not in the statement's: those are tokenized again.
        reusable = not tokens[0].comments and not tokens[-1].comments
        statement = _statement(chunk, tokens, dialect, _Tokens(tokens, text, tokenized_with) if reusable else None)
        if in_routine:
            statement = Statement(statement.text, statement.tree, ())
        statements.append(statement)
    return ParsedSql(tuple(statements))


_ROUTINES = frozenset({"PROCEDURE", "FUNCTION", "TRIGGER", "VIEW", "TASK", "EVENT", "MACRO"})


def _defines_routine(tokens: list[Any]) -> bool:
    """CREATE [OR REPLACE] ... PROCEDURE/FUNCTION/VIEW..., REPLACE PROCEDURE (Teradata)."""
    head = [t.text.upper() for t in tokens[:8]]
    if not head or head[0] not in ("CREATE", "REPLACE", "ALTER"):
        return False
    return any(word in _ROUTINES for word in head[1:])


@dataclass(frozen=True)
class _Tokens:
    """One statement's tokens as the whole text's tokenization made them: the parser reads them
    with that text (their positions are in it) instead of tokenizing the statement again."""

    tokens: list[Any]
    text: str
    dialect: Optional[str]   # the dialect that tokenized them (None: sqlglot's default)


def _tokenize(text: str, dialect: Optional[str]) -> Optional[tuple[list[Any], Optional[str]]]:
    """The text's tokens, and the dialect whose tokenizer made them."""
    from sqlglot.dialects.dialect import Dialect

    for name in dict.fromkeys((None, dialect)):
        try:
            return list(Dialect.get_or_raise(name).tokenize(text)), name
        except Exception:  # TokenError and odd input: try the next dialect
            continue
    return None


def _split(text: str, dialect: Optional[str]) -> Optional[tuple[list[tuple[str, list[Any]]], Optional[str]]]:
    tokenized = _tokenize(text, dialect)
    if tokenized is None:
        return None
    tokens, tokenized_with = tokenized
    chunks: list[tuple[str, list[Any]]] = []
    current: list[Any] = []
    for token in tokens:
        if token.token_type.name == "SEMICOLON":
            if current:
                chunks.append((text[current[0].start:current[-1].end + 1], current))
            current = []
        else:
            current.append(token)
    if current:
        chunks.append((text[current[0].start:current[-1].end + 1], current))
    return chunks, tokenized_with


MAX_STATEMENT_CHARS = 200_000  # a generated multi-megabyte INSERT is data, not a query worth parsing


def _statement(chunk: str, tokens: list[Any], dialect: Optional[str], made: Optional[_Tokens] = None) -> Statement:
    wall_clock = _wall_clock_tokens(tokens)
    tree = _parse_one(chunk, dialect, made) if len(chunk) <= MAX_STATEMENT_CHARS else None
    return Statement(chunk, tree, wall_clock)


def _parse_one(chunk: str, dialect: Optional[str], made: Optional[_Tokens] = None) -> Optional["exp.Expression"]:
    """sqlglot's tree of one statement, in its default dialect or else `dialect`; `made`, the
    statement's tokens already made, spares tokenizing it again (a third of sqlglot's time)."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.dialects.dialect import Dialect

    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # sqlglot warns about unsupported syntax on stderr
    try:
        for name in dict.fromkeys((None, dialect)):
            try:
                if made is not None and made.dialect == name:
                    # What parse_one does, from the tokens: one statement (no ';' among them).
                    parsed = Dialect.get_or_raise(name).parser().parse(made.tokens, made.text)
                    if not parsed or parsed[0] is None:
                        continue
                    tree = exp.Block(expressions=parsed) if len(parsed) > 1 else parsed[0]
                else:
                    tree = sqlglot.parse_one(chunk, read=name)
            except Exception:  # ParseError, TokenError, and internal errors on odd SQL
                continue
            if tree is not None and not isinstance(tree, exp.Command):
                return tree
        return None
    finally:
        logger.setLevel(level)


def _wall_clock_tokens(tokens: list[Any]) -> tuple[str, ...]:
    """NOW(), CURRENT_DATE... outside DDL defaults (`DEFAULT CURRENT_TIMESTAMP` is a column default)."""
    found: list[str] = []
    for i, token in enumerate(tokens):
        text = token.text.upper()
        kind = token.token_type.name
        before = tokens[i - 1].token_type.name if i else ""
        if before in ("DEFAULT", "DOT") or (before == "UPDATE" and i > 1 and tokens[i - 2].token_type.name == "ON"):
            continue
        is_call = i + 1 < len(tokens) and tokens[i + 1].token_type.name == "L_PAREN"
        if kind in ("STRING", "IDENTIFIER") and token.token_type.name != "VAR":
            continue  # a quoted "now()" is data, not a call
        if text in _WALL_CLOCK_TOKENS and kind != "STRING":
            found.append(text + ("()" if is_call else ""))
        elif text in _WALL_CLOCK_CALLS and is_call and kind == "VAR":
            found.append(text + "()")
    return tuple(found)
