"""Generated SQL for engines we cannot run: it parses in its dialect and matches reviewed golden files.

Regenerate after a reviewed change with DAGGUARD_UPDATE_GOLDEN=1.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

sqlglot = pytest.importorskip("sqlglot")

from dagguard.idempotent.remote_sql import REMOTE_DIALECTS, render_write_sql  # noqa: E402

GOLDEN = Path(__file__).with_name("golden")
CASES = {
    "replace": dict(strategy="replace", time_column="created_at"),
    "merge": dict(strategy="merge", time_column="created_at", unique_key=["order_id", "region"],
                  nullable_keys=["region"], delete_missing=True),
    "overwrite_partition": dict(strategy="overwrite_partition", partition_column="ds"),
}
COLUMNS = ["order_id", "region", "created_at", "amount", "ds"]


def _render(dialect: str, case: str) -> str:
    statements = render_write_sql(dialect, "analytics.orders", COLUMNS,
                                  staging_table="dagguard_stage", **CASES[case])
    return "".join(f"-- {s.effect}; parameters: {', '.join(s.parameters) or 'none'}\n{s.sql};\n\n"
                   for s in statements)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dialect", REMOTE_DIALECTS)
def test_generated_sql_matches_the_golden_file_and_parses(dialect, case):
    text = _render(dialect, case)
    path = GOLDEN / f"{dialect}-{case}.sql"
    if os.environ.get("DAGGUARD_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()
    for statement in render_write_sql(dialect, "analytics.orders", COLUMNS, **CASES[case]):
        parsed = sqlglot.parse_one(statement.sql, read=dialect)
        assert parsed.sql(dialect=dialect)
        assert statement.sql.count("?") == len(statement.parameters)


@pytest.mark.parametrize("dialect", REMOTE_DIALECTS)
def test_by_source_only_where_the_engine_has_it(dialect):
    merge = [s.sql for s in render_write_sql(dialect, "orders", COLUMNS, **CASES["merge"])]
    has_by_source = any("WHEN NOT MATCHED BY SOURCE" in s for s in merge)
    assert has_by_source == (dialect in ("bigquery", "databricks"))
    if not has_by_source:
        # sqlglot turns BY SOURCE into a plain NOT MATCHED ... DELETE for Snowflake, which
        # would be wrong; the separate DELETE ... NOT EXISTS is used instead.
        assert any(s.startswith("DELETE") and "NOT EXISTS" in s for s in merge)
        assert not any("THEN DELETE" in s for s in merge)


def test_every_target_statement_is_restricted_to_the_interval():
    for dialect in REMOTE_DIALECTS:
        for case in ("replace", "merge"):
            for statement in render_write_sql(dialect, "orders", COLUMNS, **CASES[case]):
                if statement.effect in ("deleted", "merged", "updated"):
                    assert {"interval_start", "interval_end"} <= set(statement.parameters)


def test_unknown_dialect_is_refused():
    from dagguard.idempotent import UnsupportedConnectionError

    with pytest.raises(UnsupportedConnectionError, match="no SQL generation for 'oracle'"):
        render_write_sql("oracle", "orders", COLUMNS, **CASES["replace"])
