"""Rows a task appends to a table that nothing before it prepared: what DG201 and DG203 judge.

A table is prepared for an append when, before it, the task itself or a task upstream of it in
the same DAG empties the whole table (DROP, TRUNCATE, CREATE [OR REPLACE] TABLE, DELETE without
WHERE): a re-run of the DAG then rebuilds the same table. Reading the target first prepares it
too (SQL run by Python in the task, or a plain SELECT in an upstream task): that is how an
incremental load skips the ids already loaded.

A clear whose table cannot be read (`f"TRUNCATE {table}"`, SQL built with `.format`, `%` or `+`
that is not static, SQL sqlglot cannot parse that starts with DROP/TRUNCATE/DELETE) may be the
one that prepares the target, so the target counts as prepared: unknown, the rules stay silent.
A name partly known (`staging_{day}`) only stands for the names it can spell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional

from dagguard.model.dags.models import FileModel
from dagguard.model.dags.dependencies import task_graph
from dagguard.model.sql.sql_facts import WriteEffect, read_tables, write_effects
from dagguard.model.tasks.task_io import SqlSource, TaskIO, task_io
from dagguard.model.sql.templates import PLACEHOLDER

_PREPARED_KEY = "prepared_tables"
# What an unreadable statement may have cleared: any table.
ANY_TABLE = "*"
# Statements that empty a table, at the start of a statement of SQL sqlglot could not parse.
_CLEARING_TEXT = re.compile(r"(?:^|;)\s*(?:drop\s+table|truncate|delete\s|create\s+(?:or\s+replace\s+)?table)",
                            re.IGNORECASE)


@dataclass(frozen=True)
class Append:
    source: SqlSource
    effect: WriteEffect


def unprepared_appends(file: FileModel, io: TaskIO, path: Path, *, partial_clears: bool) -> Iterator[Append]:
    """The task's INSERT/COPY effects, in order, on tables not prepared before them; none after
    a statement that is not static (it may be the one that clears). `partial_clears`: a DELETE
    with a WHERE counts as preparing its table."""
    prepared: set[str] = set()
    for source, statement in io.statements():
        if statement is None or statement.tree is None:
            return
        if source.in_callable and _is_query(statement.tree):
            prepared |= read_tables(statement.tree)
        for effect in write_effects(statement.tree, statement.text):
            if effect.kind == "clear" and (partial_clears or not effect.partial):
                prepared.add(_cleared_name(effect.table))
            elif effect.kind == "append" and not may_name(prepared, effect.table) \
                    and not prepared_upstream(file, io, effect.table, path):
                yield Append(source, effect)


def table_prepared(file: FileModel, io: TaskIO, table: Optional[str], path: Path) -> bool:
    """Does the task (anywhere in its SQL) or a task upstream of it empty or read `table`?"""
    if may_name(_prepared_tables(file, io), table):
        return True  # an unreadable clear may be of this table, even one whose name is unknown
    return table is not None and prepared_upstream(file, io, table, path)


def prepared_upstream(file: FileModel, io: TaskIO, table: Optional[str], path: Path) -> bool:
    """Does a task that runs before this one in its DAG empty `table` as a whole, or read it?
    (A DELETE of one interval in another task is no refresh: clearing the insert alone
    duplicates that interval.)"""
    if table is None:
        return False
    for ancestor in task_graph(file, io.dag).ancestors(io.task):
        if may_name(_prepared_tables(file, task_io(file, io.dag, ancestor, path)), table):
            return True
    return False


def may_name(names: Iterable[str], table: Optional[str]) -> bool:
    """May one of `names` (read from SQL, some with placeholders, or ANY_TABLE) be `table`?
    A placeholder stands for any text, so `staging_{day}` may be `staging_x` but not `orders`;
    a table whose own name is unknown (None) may be any name that is not fully known."""
    for name in names:
        if name == table or name == ANY_TABLE:
            return True
        if PLACEHOLDER.search(name) and (table is None or _spelling(name).fullmatch(table)):
            return True
    return False


def _spelling(name: str) -> "re.Pattern[str]":
    """The names a table name with placeholders can spell."""
    return re.compile(".+".join(re.escape(part) for part in PLACEHOLDER.split(name)))


def _cleared_name(table: Optional[str]) -> str:
    return table if table is not None else ANY_TABLE


def _prepared_tables(file: FileModel, io: TaskIO) -> frozenset[str]:
    """Tables the task's SQL empties as a whole or reads with a query; ANY_TABLE for a
    statement built at run time (`.format`, `%`, `+`), or unparseable text starting like a clear."""
    cache: dict[int, frozenset[str]] = file.analyses.setdefault(_PREPARED_KEY, {})
    found = cache.get(id(io.task))
    if found is None:
        tables: set[str] = set()
        for source, statement in io.statements():
            if statement is None and source.built \
                    or statement is not None and statement.tree is None and _CLEARING_TEXT.search(statement.text):
                tables.add(ANY_TABLE)  # it may be the statement that empties the target
                continue
            if statement is None or statement.tree is None:
                continue
            if _is_query(statement.tree):
                tables |= read_tables(statement.tree)
            tables.update(_cleared_name(e.table) for e in write_effects(statement.tree, statement.text)
                          if e.kind == "clear" and not e.partial)
        found = cache[id(io.task)] = frozenset(tables)
    return found


def _is_query(tree: object) -> bool:
    """A SELECT (or UNION...), which writes nothing."""
    from sqlglot import exp

    return isinstance(tree, exp.Query)
