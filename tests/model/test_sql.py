"""SQL of a task: statement splitting, sqlglot parsing, write effects and interval bounds."""

from __future__ import annotations

import pytest

from dagguard.model.sql.sql import dialect_for, parse_sql
from dagguard.model.sql.sql_facts import empty_trigger_ranges, inclusive_end_bounds, write_effects
from dagguard.model.sql.templates import analyse_template


def effects(sql: str) -> list[tuple[str, str, bool]]:
    parsed = parse_sql(sql)
    return [(e.kind, e.table, e.from_query) for s in parsed.statements if s.tree is not None
            for e in write_effects(s.tree, s.text)]


def test_statements_are_split_and_parsed():
    parsed = parse_sql("DELETE FROM t WHERE d = 1; INSERT INTO t SELECT * FROM s;")
    assert [type(s.tree).__name__ for s in parsed.statements] == ["Delete", "Insert"]
    assert parsed.fully_parsed


def test_unparseable_sql_keeps_a_statement_without_tree():
    parsed = parse_sql("THIS IS NOT ((( SQL")
    assert not parsed.fully_parsed
    assert parse_sql("SELECT 'unterminated").statements[0].tree is None


@pytest.mark.parametrize(("sql", "expected"), [
    ("INSERT INTO a.b SELECT * FROM s", [("append", "a.b", True)]),
    ("INSERT INTO t VALUES (1)", [("append", "t", False)]),
    ("INSERT INTO t VALUES (1) ON CONFLICT (id) DO NOTHING", [("upsert", "t", False)]),
    ("INSERT OR REPLACE INTO t VALUES (1)", [("upsert", "t", False)]),
    ("INSERT OVERWRITE TABLE t SELECT * FROM s", [("upsert", "t", True)]),
    ("INSERT INTO t SELECT * FROM s WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.id = s.id)", [("upsert", "t", True)]),
    ("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = s.a", [("upsert", "t", True)]),
    ("COPY t FROM 's3://bucket/x' IAM_ROLE 'r'", [("append", "t", True)]),
    ("COPY INTO t FROM @stage", [("upsert", "t", True)]),
    ("COPY INTO t FROM @stage FORCE = TRUE", [("append", "t", True)]),
    ("COPY t TO 's3://bucket/x'", []),
    ("TRUNCATE TABLE t", [("clear", "t", False)]),
    ("DROP TABLE IF EXISTS t", [("clear", "t", False)]),
    ("CREATE TABLE IF NOT EXISTS t (a INT)", []),
    ("CREATE OR REPLACE TABLE t AS SELECT 1", [("clear", "t", False)]),
    ("UPDATE t SET a = 1", [("update", "t", False)]),
    ("SELECT * FROM t", []),
])
def test_write_effects(sql, expected):
    assert effects(sql) == expected


def test_delete_with_where_is_a_partial_clear():
    (statement,) = parse_sql("DELETE FROM t WHERE d = 1").statements
    (effect,) = write_effects(statement.tree, statement.text)
    assert effect.kind == "clear" and effect.partial


@pytest.mark.parametrize(("sql", "found"), [
    ("SELECT NOW(), CURRENT_DATE, CURRENT_TIMESTAMP, GETDATE(), SYSDATE, LOCALTIMESTAMP",
     ("NOW()", "CURRENT_DATE", "CURRENT_TIMESTAMP", "GETDATE()", "SYSDATE", "LOCALTIMESTAMP")),
    ("SELECT 'now()', \"current_date\" FROM t -- CURRENT_DATE", ()),
    ("CREATE TABLE t (a TIMESTAMP DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP)", ()),
    ("SELECT t.now FROM t", ()),
])
def test_wall_clock_tokens(sql, found):
    assert tuple(f for s in parse_sql(sql).statements for f in s.wall_clock) == found


def test_routine_bodies_are_not_the_tasks_clock_reads():
    sql = "REPLACE PROCEDURE p (OUT ts TIMESTAMP) BEGIN SET ts = CURRENT_TIMESTAMP; END;"
    assert all(not s.wall_clock for s in parse_sql(sql).statements)


def test_pyformat_parameters_parse():
    parsed = parse_sql("INSERT INTO t SELECT * FROM s WHERE d = %(day)s AND x = %s")
    assert parsed.fully_parsed


def test_dialect_hint_from_operator():
    assert dialect_for("airflow.providers.snowflake.operators.snowflake.SnowflakeOperator") == "snowflake"
    assert dialect_for("airflow.providers.google.cloud.operators.bigquery.BigQueryInsertJobOperator") == "bigquery"
    assert dialect_for("airflow.providers.common.sql.operators.sql.SQLExecuteQueryOperator") is None


def bounds(sql: str, finder):
    template = analyse_template(sql)
    (statement,) = parse_sql(template.text).statements
    return finder(statement.tree, template.expression)


@pytest.mark.parametrize(("sql", "count"), [
    ("SELECT * FROM t WHERE ts BETWEEN '{{ data_interval_start }}' AND '{{ data_interval_end }}'", 1),
    ("SELECT * FROM t WHERE ts <= CAST('{{ data_interval_end }}' AS TIMESTAMP)", 1),
    ("SELECT * FROM t WHERE '{{ data_interval_end }}' >= ts", 1),
    ("SELECT * FROM t WHERE ts BETWEEN '{{ ds }}' AND '{{ next_ds }}'", 1),
    ("SELECT * FROM t WHERE ts <= '{{ macros.ds_add(ds, 1) }}'", 1),
    ("SELECT * FROM t WHERE ts >= '{{ data_interval_start }}' AND ts < '{{ data_interval_end }}'", 0),
    ("SELECT * FROM t WHERE ts <= '{{ ds }}'", 0),
    ("SELECT * FROM t WHERE ts <= CAST('{{ data_interval_end }}' AS DATE) - 1", 0),
])
def test_inclusive_end_bounds(sql, count):
    assert len(bounds(sql, inclusive_end_bounds)) == count


@pytest.mark.parametrize(("sql", "count"), [
    ("SELECT * FROM t WHERE ts >= '{{ data_interval_start }}' AND ts < '{{ data_interval_end }}'", 1),
    ("SELECT * FROM t WHERE ts > '{{ logical_date }}' AND ts <= '{{ data_interval_end }}'", 1),
    ("SELECT * FROM t WHERE ts BETWEEN '{{ data_interval_start }}' AND '{{ data_interval_end }}'", 1),
    ("SELECT * FROM t WHERE d >= '{{ data_interval_start | ds }}' AND d < '{{ data_interval_end | ds }}'", 1),
    ("SELECT * FROM t WHERE d BETWEEN '{{ data_interval_start | ds }}' AND '{{ data_interval_end | ds }}'", 0),
    ("SELECT * FROM t WHERE ts < '{{ data_interval_end }}'", 0),
    ("SELECT * FROM t WHERE a >= '{{ data_interval_start }}' AND b < '{{ data_interval_end }}'", 0),
    ("SELECT * FROM t WHERE ts >= '{{ ds }}' AND ts < '{{ data_interval_end }}'", 0),
])
def test_empty_trigger_ranges(sql, count):
    assert len(bounds(sql, empty_trigger_ranges)) == count


def test_huge_statements_are_not_parsed():
    sql = "INSERT INTO t VALUES " + ", ".join(["(1, 'x')"] * 30_000)
    (statement,) = parse_sql(sql).statements
    assert statement.tree is None


# Each statement is parsed from the whole text's tokens (issue 25's speed work), which must give
# the tree sqlglot gives the statement alone: comments on the lines around a statement belong to
# it only in the whole text, so such a statement is tokenized again.
WHOLE_TEXTS = [
    "DELETE FROM t WHERE ds = '{{ ds }}';\n-- reload the day\nINSERT INTO t SELECT * FROM s -- all rows\n;",
    "BEGIN; UPDATE t SET a = 1 /* one */ WHERE b = 2; COMMIT;",
    "INSERT INTO t (a) VALUES (NOW()); SELECT CURRENT_DATE",
    "CREATE TABLE x AS SELECT 1 AS a;\n\n  /* note */  TRUNCATE x; MERGE INTO t USING s ON t.id = s.id "
    "WHEN MATCHED THEN UPDATE SET a = s.a",
    "SELECT a FROM t WHERE d BETWEEN %(start)s AND %(end)s",
]


@pytest.mark.parametrize("dialect", [None, "postgres", "snowflake"])
@pytest.mark.parametrize("text", WHOLE_TEXTS)
def test_each_statement_has_the_tree_sqlglot_gives_it_alone(text, dialect):
    import sqlglot
    from sqlglot import exp

    for statement in parse_sql(text, dialect).statements:
        alone = None
        for name in dict.fromkeys((None, dialect)):
            try:
                alone = sqlglot.parse_one(statement.text, read=name)
            except sqlglot.errors.ParseError:
                continue
            if not isinstance(alone, exp.Command):
                break
            alone = None
        assert repr(statement.tree) == repr(alone)
        assert (statement.tree.sql() if statement.tree else None) == (alone.sql() if alone else None)
