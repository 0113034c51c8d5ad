"""Line offsets as CPython numbers lines: only \\n, \\r\\n and \\r end one, in text as in bytes."""

from __future__ import annotations

import ast

import pytest

from dagguard.api import check_source
from dagguard.engine.source_lines import line_starts

# Characters str.splitlines() breaks at and CPython does not.
NOT_LINE_ENDS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_each_statement_starts_where_cpython_says(newline):
    lines = [f"a{i} = '{NOT_LINE_ENDS}'" for i in range(5)] + ["", "\x0cb = 1", "c = '''x", "y'''", "d = 2"]
    source = newline.join(lines) + newline
    starts = line_starts(source)
    for statement in ast.parse(source).body:
        name = statement.targets[0].id   # type: ignore[attr-defined]
        offset = starts[statement.lineno - 1] + statement.col_offset
        assert source[offset:].startswith(name), name
    assert starts[-1] == len(source) and len(starts) == len(lines) + 1
    encoded = source.encode("utf-8")
    assert [len(source[:s].encode("utf-8")) for s in starts] == line_starts(encoded)


def test_a_file_without_a_final_newline_ends_at_its_length():
    assert line_starts("a\nb") == [0, 2, 3]
    assert line_starts(b"a\r\nb") == [0, 3, 4]
    assert line_starts("") == [0]


def test_a_too_deep_expression_after_form_feeds_is_found_in_text_input():
    # Regression: text input with form feeds shifted the precheck's line offsets, so it judged
    # the expression's lines too short to nest deeply and skipped it: no DG000 at depth 1,200,
    # and at depth 100,000 the check never finished.
    source = ("from airflow import DAG\nnote = '" + "\x0c" * 3000 + "'\n"
              + "x = " + "+".join(["a"] * 1200) + "\n")
    findings = check_source(source, "deep.py")
    assert [(f.code, f.line) for f in findings] == [("DG000", 3)]
    assert "nested more than 1,000 levels deep" in findings[0].message
