"""Jinja handling: variables, removed keys, bounds and placeholder text, with jinja2's parser."""

from __future__ import annotations

import pytest

from dagguard.model.sql.templates import PLACEHOLDER, analyse_template, display, has_jinja


def test_plain_text_is_not_parsed():
    template = analyse_template("SELECT 1")
    assert template.ok and template.text == "SELECT 1" and not template.expressions
    assert not has_jinja("SELECT '{' || x || '}'")


@pytest.mark.parametrize(("text", "roots"), [
    ("{{ ds }}", {"ds"}),
    ("{{ data_interval_start | ds }}", {"data_interval_start"}),
    ("{{ macros.ds_add(ds, 1) }}", {"macros", "ds"}),
    ("{{ params.table }}", {"params"}),
    ("{{ dag_run.logical_date.strftime('%Y') }}", {"dag_run"}),
    ("{% if execution_date %}x{% endif %}", {"execution_date"}),
    ("{% for t in params.tables %}{{ t }}{% endfor %}", {"params"}),
    ("{% set day = ds %}{{ day }}", {"ds"}),
])
def test_roots_are_the_free_variables(text, roots):
    assert analyse_template(text).roots == roots


@pytest.mark.parametrize(("text", "interval"), [
    ("{{ ds }}", True),
    ("{{ ds_nodash }}", True),
    ("{{ data_interval_end | ts }}", True),
    ("{{ macros.ds_format(ds, '%Y-%m-%d', '%Y%m%d') }}", True),
    ("{{ dag_run.logical_date }}", True),
    ("{{ ti.execution_date }}", True),
    ("{{ params.table }}", False),
    ("{{ var.value.bucket }}", False),
    ("{{ run_id }}", False),
])
def test_interval_variables_with_filters_and_macros(text, interval):
    assert analyse_template(text).interval is interval


def test_user_defined_macros_are_unknown_roots():
    assert analyse_template("{{ my_start() }}").unknown_roots == {"my_start"}
    assert not analyse_template("{{ ds }} {{ params.x }} {{ macros.ds_add(ds, 1) }}").unknown_roots


def test_removed_keys_one_per_occurrence():
    template = analyse_template("{{ execution_date }} {{ next_ds }} {{ execution_date | ds }} {{ dag_run.execution_date }}")
    assert template.removed == ("execution_date", "next_ds", "execution_date", "dag_run.execution_date")
    assert analyse_template("{{ dag_run.conf['x'] }} {{ logical_date }}").removed == ()


def test_placeholders_replace_expressions_and_keep_text():
    template = analyse_template("SELECT * FROM {{ params.t }} WHERE d = '{{ ds }}'{# comment #}")
    tokens = PLACEHOLDER.findall(template.text)
    assert len(tokens) == 2
    assert template.text.startswith("SELECT * FROM __dgt_") and template.text.endswith("'")
    assert display(template.text, [template]) == "SELECT * FROM {{ params.t }} WHERE d = '{{ ds }}'"


def test_equal_expressions_get_equal_placeholders():
    template = analyse_template("DELETE FROM {{ params.t }}; INSERT INTO {{ params.t }} SELECT 1")
    assert len(set(PLACEHOLDER.findall(template.text))) == 1


def test_if_keeps_first_branch_and_loops_render_once():
    template = analyse_template("a{% if x %}b{% else %}c{% endif %}{% for i in y %}d{% endfor %}")
    assert template.text == "abd"


@pytest.mark.parametrize(("text", "bound", "shape", "key"), [
    ("{{ data_interval_end }}", "end", "", "data_interval_end"),
    ("{{ data_interval_end | ds }}", "end", "|ds", "data_interval_end"),
    ("{{ next_ds }}", "end", "", "next_ds"),
    ("{{ macros.ds_add(ds, 1) }}", "end", "", "macros.ds_add(ds, 1)"),
    ("{{ data_interval_start }}", "start", "", "data_interval_start"),
    ("{{ logical_date.strftime('%Y') }}", "start", ".strftime", "logical_date"),
    ("{{ data_interval_end - macros.timedelta(seconds=1) }}", None, "", None),
    ("{{ macros.ds_add(ds, -1) }}", None, "", None),
    ("{{ ds }}", None, "", None),
])
def test_bounds(text, bound, shape, key):
    (expr,) = analyse_template(text).expressions
    assert (expr.bound, expr.shape, expr.key) == (bound, shape, key)


def test_jinja_syntax_error_is_not_a_crash():
    template = analyse_template("SELECT {{ ds ")
    assert not template.ok and template.roots == frozenset() and not template.interval


def test_wall_clock_macros():
    assert analyse_template("{{ macros.datetime.now() }}").wall_clock == ("macros.datetime.now()",)


def test_the_runs_removed_trigger_flag_and_dataset_events_are_removed_keys():
    template = analyse_template("{{ dag_run.external_trigger }} {{ triggering_dataset_events }}")
    assert template.removed == ("triggering_dataset_events", "dag_run.external_trigger")
    assert analyse_template("{{ ti.external_trigger }} {{ triggering_asset_events }}").removed == ()
