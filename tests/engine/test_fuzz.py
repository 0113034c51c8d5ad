"""Bounded fuzzing: generated programs and mangled rule-page examples never raise and never
cause an internal error; whatever the checker cannot read is a DG000 finding."""

from __future__ import annotations

from pathlib import Path

import hypothesmith
from hypothesis import HealthCheck, given, settings, strategies as st

from dagguard.config import Settings
from dagguard.engine import runner
from dagguard.engine.deep_stack import run_deep
from dagguard.rules import ALL_RULES
from dagguard.rules.pages import examples, page_text
from tests.lint_helpers import NOW

run_deep(lambda: None)  # raise the recursion limit now, not while hypothesis watches it
EXAMPLES = [example.code.encode("utf-8") for rule in ALL_RULES for example in examples(page_text(rule.code) or "")]
def bounded(examples: int) -> settings:
    """Few enough examples for CI, the same ones on every run."""
    return settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck),
                    derandomize=True, database=None)


def assert_checked_cleanly(source: bytes | str) -> None:
    result = run_deep(runner.check_source, source, Path("fuzzed.py"), Settings(), NOW, "fuzzed.py")
    assert result.internal_errors == ()
    for finding in result.findings:
        assert finding.line >= 1 and finding.column >= 1 and finding.message


@bounded(100)
@given(source=hypothesmith.from_grammar())
def test_generated_programs(source):
    assert_checked_cleanly(source)


@bounded(25)
@given(source=hypothesmith.from_node())
def test_generated_syntax_trees(source):
    assert_checked_cleanly(source)


def _truncated(data: st.DataObject, source: bytes) -> bytes:
    return source[:data.draw(st.integers(0, len(source)))]


def _byte_flipped(data: st.DataObject, source: bytes) -> bytes:
    mangled = bytearray(source)
    for _ in range(data.draw(st.integers(1, 4))):
        mangled[data.draw(st.integers(0, len(mangled) - 1))] = data.draw(st.integers(0, 255))
    return bytes(mangled)


def _encoded(data: st.DataObject, source: bytes) -> bytes:
    text = source.decode("utf-8")
    form = data.draw(st.sampled_from(["bom", "crlf", "cr", "latin-1 cookie", "wrong cookie", "bom and cookie"]))
    if form == "bom":
        return b"\xef\xbb\xbf" + source
    if form == "crlf":
        return text.replace("\n", "\r\n").encode("utf-8")
    if form == "cr":
        return text.replace("\n", "\r").encode("utf-8")
    latin = ("# -*- coding: latin-1 -*-\n" + text + "x = 'caf\u00e9'\n").encode("latin-1", errors="replace")
    if form == "latin-1 cookie":
        return latin
    if form == "wrong cookie":
        return b"# -*- coding: ascii -*-\n" + text.encode("utf-8") + "x = 'caf\u00e9'\n".encode("utf-8")
    return b"\xef\xbb\xbf" + latin  # a BOM says UTF-8, the cookie latin-1: CPython refuses it


@bounded(400)
@given(data=st.data())
def test_mangled_rule_page_examples(data):
    source = data.draw(st.sampled_from(EXAMPLES))
    mangle = data.draw(st.sampled_from([_truncated, _byte_flipped, _encoded]))
    assert_checked_cleanly(mangle(data, source))
