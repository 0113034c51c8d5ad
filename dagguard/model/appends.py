"""Rows a task appends to a table that nothing before it prepared: what DG201 and DG203 judge.

A table is prepared for an append when, before it, the task itself or a task upstream of it in
the same DAG empties the whole table (DROP, TRUNCATE, CREATE [OR REPLACE] TABLE, DELETE without
WHERE): a re-run of the DAG then rebuilds the same table. Reading the target first prepares it
too (SQL run by Python in the task, or a plain SELECT in an upstream task): that is how an
incremental load skips the ids already loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from dagguard.model.dags import FileModel
from dagguard.model.dependencies import task_graph
from dagguard.model.sql_facts import WriteEffect, read_tables, write_effects
from dagguard.model.task_io import SqlSource, TaskIO, task_io

_PREPARED_KEY = "prepared_tables"


@dataclass(frozen=True)
class Append:
    source: SqlSource
    effect: WriteEffect


def unprepared_appends(file: FileModel, io: TaskIO, path: Path, *, partial_clears: bool) -> Iterator[Append]:
    """The task's INSERT/COPY effects, in order, on tables not prepared before them; none after
    a statement that is not static (it may be the one that clears). `partial_clears`: a DELETE
    with a WHERE counts as preparing its table."""
    prepared: set[Optional[str]] = set()
    for source, statement in io.statements():
        if statement is None or statement.tree is None:
            return
        if source.in_callable and _is_query(statement.tree):
            prepared |= read_tables(statement.tree)
        for effect in write_effects(statement.tree, statement.text):
            if effect.kind == "clear" and (partial_clears or not effect.partial):
                prepared.add(effect.table)
            elif effect.kind == "append" and effect.table not in prepared \
                    and not prepared_upstream(file, io, effect.table, path):
                yield Append(source, effect)


def table_prepared(file: FileModel, io: TaskIO, table: Optional[str], path: Path) -> bool:
    """Does the task (anywhere in its SQL) or a task upstream of it empty or read `table`?"""
    return table is not None and (table in _prepared_tables(file, io) or prepared_upstream(file, io, table, path))


def prepared_upstream(file: FileModel, io: TaskIO, table: Optional[str], path: Path) -> bool:
    """Does a task that runs before this one in its DAG empty `table` as a whole, or read it?
    (A DELETE of one interval in another task is no refresh: clearing the insert alone
    duplicates that interval.)"""
    if table is None:
        return False
    for ancestor in task_graph(file, io.dag).ancestors(io.task):
        if table in _prepared_tables(file, task_io(file, io.dag, ancestor, path)):
            return True
    return False


def _prepared_tables(file: FileModel, io: TaskIO) -> frozenset[Optional[str]]:
    """Tables the task's static SQL empties as a whole or reads with a query."""
    cache: dict[int, frozenset[Optional[str]]] = file.analyses.setdefault(_PREPARED_KEY, {})
    found = cache.get(id(io.task))
    if found is None:
        tables: set[Optional[str]] = set()
        for _, statement in io.statements():
            if statement is None or statement.tree is None:
                continue
            if _is_query(statement.tree):
                tables |= read_tables(statement.tree)
            tables.update(e.table for e in write_effects(statement.tree, statement.text)
                          if e.kind == "clear" and not e.partial)
        found = cache[id(io.task)] = frozenset(tables)
    return found


def _is_query(tree: object) -> bool:
    """A SELECT (or UNION...), which writes nothing."""
    from sqlglot import exp

    return isinstance(tree, exp.Query)
