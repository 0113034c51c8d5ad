"""parameters= bound into the SQL text as the driver binds them, in each DB-API placeholder style."""

from __future__ import annotations

import pytest

from dagguard.model.sql.sql_parameters import bind_parameters
from dagguard.model.basics.values import UNKNOWN, DictEntry, StaticDict


def static_dict(**values) -> StaticDict:
    return StaticDict({key: DictEntry(None, None, value) for key, value in values.items()}, True)


def test_named_placeholders_take_the_dict_values_as_quoted_literals():
    params = static_dict(start="{{ data_interval_start }}", end="{{ data_interval_end }}", n=3)
    sql = "SELECT * FROM t WHERE ts >= %(start)s AND ts < %(end)s LIMIT %(n)s"
    assert bind_parameters(sql, params) == (
        "SELECT * FROM t WHERE ts >= '{{ data_interval_start }}' AND ts < '{{ data_interval_end }}' LIMIT 3")


def test_positional_placeholders_take_the_list_in_order():
    sql = "SELECT * FROM t WHERE ts BETWEEN %s AND %s"
    assert bind_parameters(sql, ["{{ ds }}", 1.5]) == "SELECT * FROM t WHERE ts BETWEEN '{{ ds }}' AND 1.5"
    assert bind_parameters(sql, ("a", "b")) == "SELECT * FROM t WHERE ts BETWEEN 'a' AND 'b'"


def test_quotes_inside_a_value_are_doubled():
    assert bind_parameters("SELECT %(x)s", static_dict(x="it's")) == "SELECT 'it''s'"


def test_a_doubled_percent_is_one_percent_and_never_a_placeholder():
    sql = "SELECT * FROM t WHERE name LIKE 'a%%s' AND ts < %(end)s"
    assert bind_parameters(sql, static_dict(end="x")) == "SELECT * FROM t WHERE name LIKE 'a%s' AND ts < 'x'"


@pytest.mark.parametrize("value", [UNKNOWN, None, True, float("nan"), [1, 2], b"bytes"])
def test_values_without_a_plain_literal_leave_their_placeholder(value):
    sql = "SELECT * FROM t WHERE ts < %(end)s AND k = %(k)s"
    assert bind_parameters(sql, static_dict(end=value, k=7)) == "SELECT * FROM t WHERE ts < %(end)s AND k = 7"


def test_a_name_missing_from_the_dict_and_a_positional_placeholder_with_a_dict_stay():
    sql = "SELECT * FROM t WHERE a = %(a)s AND b = %(b)s AND c = %s"
    assert bind_parameters(sql, static_dict(a=1)) == "SELECT * FROM t WHERE a = 1 AND b = %(b)s AND c = %s"


def test_a_list_that_does_not_match_the_placeholders_binds_nothing():
    sql = "SELECT * FROM t WHERE a = %s AND b = %s"
    assert bind_parameters(sql, [1]) == sql
    assert bind_parameters(sql, [1, 2, 3]) == sql


@pytest.mark.parametrize("params", [None, UNKNOWN, "not parameters", 5])
def test_sql_stays_as_written_without_static_parameters(params):
    sql = "SELECT * FROM t WHERE ts < %(end)s AND name LIKE 'a%%'"
    assert bind_parameters(sql, params) == sql


def test_question_marks_take_the_list_in_order_outside_strings_comments_and_jinja():
    sql = ("SELECT '?' AS q, \"a?\" FROM t -- why?\n"
           "WHERE ts >= ? /* or? */ AND ts < ? AND note = '{{ 'x' if y else '?' }}'")
    assert bind_parameters(sql, ["{{ data_interval_start }}", "{{ data_interval_end }}"]) == (
        "SELECT '?' AS q, \"a?\" FROM t -- why?\n"
        "WHERE ts >= '{{ data_interval_start }}' /* or? */ AND ts < '{{ data_interval_end }}' "
        "AND note = '{{ 'x' if y else '?' }}'")


def test_question_marks_that_do_not_match_the_list_bind_nothing():
    sql = "SELECT * FROM t WHERE a = ? AND b = ?"
    assert bind_parameters(sql, [1]) == sql


def test_named_colon_placeholders_take_the_dict_values():
    sql = "SELECT x::date, arr[1:2], '{{ ds }} 00:00:00' FROM t WHERE ts >= :start AND ts < :end AND k = :other"
    params = static_dict(start="{{ data_interval_start }}", end="{{ data_interval_end }}")
    assert bind_parameters(sql, params) == (
        "SELECT x::date, arr[1:2], '{{ ds }} 00:00:00' FROM t "
        "WHERE ts >= '{{ data_interval_start }}' AND ts < '{{ data_interval_end }}' AND k = :other")


def test_numbered_colon_placeholders_take_the_list_by_position():
    sql = "SELECT * FROM t WHERE ts >= :1 AND ts < :2 AND ds = :1"
    assert bind_parameters(sql, ("a", "b")) == "SELECT * FROM t WHERE ts >= 'a' AND ts < 'b' AND ds = 'a'"
    assert bind_parameters(sql, ("a",)) == sql  # :2 has no item


def test_pyformat_wins_where_the_sql_uses_it():
    sql = "SELECT * FROM t WHERE ts >= %(start)s AND note = ':start'"
    assert bind_parameters(sql, static_dict(start="s")) == "SELECT * FROM t WHERE ts >= 's' AND note = ':start'"


@pytest.mark.parametrize("opener", ["'", '"', "/*", "{{", "{%", "{#", "'{{"])
def test_an_unclosed_quote_comment_or_jinja_block_hides_the_rest_of_the_text(opener):
    # Many openers in a row once made the matching backtrack for minutes.
    sql = f"SELECT {opener}" + "{{ a }} x ' {{ b " * 30 + " WHERE ts >= ? AND ts < ?"
    assert bind_parameters(sql, [1, 2]) == sql
