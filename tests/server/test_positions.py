"""Columns in the client's encoding: UTF-16 counts a character beyond the BMP twice."""

from __future__ import annotations

import pytest

pytest.importorskip("lsprotocol")

from dagguard.engine.findings import Finding  # noqa: E402
from dagguard.server.actions import text_edit  # noqa: E402
from dagguard.server.diagnostics import finding_range  # noqa: E402
from dagguard.server.positions import from_client_column, to_client_column  # noqa: E402

LINE = 'x = "🐍é"; catchup=True'


@pytest.mark.parametrize("encoding, expected", [("utf-16", 11), ("utf-32", 10), ("utf-8", 14)])
def test_columns_after_non_ascii_text(encoding: str, expected: int) -> None:
    column = LINE.index("catchup") + 1
    assert to_client_column(LINE, column, encoding) == expected
    assert from_client_column(LINE, expected, encoding) == column - 1


def test_a_finding_s_range_is_in_client_units() -> None:
    start = LINE.index("catchup") + 1
    finding = Finding("f.py", 1, start, "DG101", "catchup-without-end-date", "error", 1, start + 12, "m")
    where = finding_range(finding, [LINE + "\n"], "utf-16")
    assert (where.start.character, where.end.character) == (11, 23)


@pytest.mark.parametrize("before, after", [
    ("a\nb\nc\n", "a\nB\nc\n"),
    ("a\nb\nc", "a\nb\nc  # noqa: DG101"),
    ("a\nb\n", "a\nb\nc\n"),
    ("a\r\nb\r\n", "x\r\nb\r\n"),
])
def test_the_edit_turns_the_text_into_the_other(before: str, after: str) -> None:
    from tests.server.lsp_client import apply_edit

    edit = text_edit(before, after, "utf-16")
    assert edit is not None
    as_json = {"range": {"start": {"line": edit.range.start.line, "character": edit.range.start.character},
                         "end": {"line": edit.range.end.line, "character": edit.range.end.character}},
               "newText": edit.new_text}
    assert apply_edit(before, as_json) == after
    assert text_edit(before, before, "utf-16") is None
