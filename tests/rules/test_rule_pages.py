"""Every rule has a page, and every example on every page behaves as the page says."""

from __future__ import annotations


import pytest

from dagguard.api import check_paths, fix_source
from dagguard.config import Settings, parse_table
from dagguard.rules import ALL_RULES
from dagguard.rules.pages import examples, page_text, pages_folder
from tests.lint_helpers import NOW

CASES = [
    pytest.param(rule, example, id=f"{rule.code}-{example.kind}-{example.number}")
    for rule in ALL_RULES
    for example in examples(page_text(rule.code) or "")
]


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_every_rule_has_a_page_with_bad_and_good_examples(rule):
    text = page_text(rule.code)
    assert text is not None, f"rules/{rule.code}.md is missing"
    assert text.splitlines()[0] == f"# {rule.code} {rule.name}"
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## How to fix"):
        assert section in text, f"{rule.code}.md lacks {section!r}"
    kinds = {e.kind for e in examples(text)}
    assert kinds == {"bad", "good"}


def test_no_page_without_a_rule():
    codes = {rule.code for rule in ALL_RULES}
    pages = {p.stem for p in pages_folder().glob("DG*.md")}
    assert pages == codes


@pytest.mark.parametrize(("rule", "example"), CASES)
def test_page_example(tmp_path, rule, example):
    config = tmp_path / "pyproject.toml"
    options = {key: _option_value(value) for key, value in example.options}
    settings = parse_table(options, config) if options else Settings(config_path=config)
    for name, text in example.files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    target = tmp_path / "example_dag.py"
    target.write_text(example.code, encoding="utf-8")
    found = [f.code for f in check_paths([target], settings=settings, now=NOW).findings]
    if example.kind == "bad":
        assert rule.code in found, f"expected {rule.code}, got {found}"
    else:
        assert rule.code not in found, f"expected no {rule.code}, got {found}"


FIXED_CASES = [
    pytest.param(rule, example, id=f"{rule.code}-bad-{example.number}-fixed")
    for rule in ALL_RULES
    for example in examples(page_text(rule.code) or "")
    if example.fixed is not None
]


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_every_fixable_rule_shows_its_fix_and_its_safety(rule):
    text = page_text(rule.code)
    assert ("Fixable: yes" in text.split("\n", 3)[2]) == rule.fixable
    if rule.fixable:
        assert "## Fix safety" in text, f"{rule.code}.md lacks '## Fix safety'"
        assert any(e.fixed is not None for e in examples(text)), f"{rule.code}.md shows no ```python fixed``` example"


@pytest.mark.parametrize(("rule", "example"), FIXED_CASES)
def test_page_fixed_example(tmp_path, rule, example):
    """The page's fixed example is what fixing its bad example (this rule's fixes, safe and
    unsafe) gives, and the fixed text has nothing left for the rule to fix."""
    options = {key: _option_value(value) for key, value in example.options}
    settings = parse_table(options, tmp_path / "pyproject.toml") if options else Settings()
    settings = settings.with_overrides(select=(rule.code,))
    result = fix_source(example.code, tmp_path / "example_dag.py", unsafe_fixes=True, settings=settings, now=NOW)
    assert result.fixed.decode("utf-8") == example.fixed
    assert result.applied, "the bad example's fix did not apply"
    assert not [f for f in result.result.findings if f.fixable]


def _option_value(text: str):
    if text.isdigit():
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    return text


def _messy(text: str) -> bytes:
    """The example with a BOM, CRLF endings, comments and odd spacing around it."""
    body = "# leading   comment, 'quotes' kept\n\n" + text + "\n\nodd  =  {'a':1}   ;  other = ( 2 )  # trailing\n"
    return b"\xef\xbb\xbf" + body.replace("\n", "\r\n").encode("utf-8")


@pytest.mark.parametrize(("rule", "example"), FIXED_CASES)
def test_page_fix_keeps_bom_crlf_comments_and_spacing(tmp_path, rule, example):
    options = {key: _option_value(value) for key, value in example.options}
    settings = parse_table(options, tmp_path / "pyproject.toml") if options else Settings()
    settings = settings.with_overrides(select=(rule.code,))
    result = fix_source(_messy(example.code), tmp_path / "example_dag.py", unsafe_fixes=True, settings=settings,
                        now=NOW)
    assert result.fixed == _messy(example.fixed)
    again = fix_source(result.fixed, tmp_path / "example_dag.py", unsafe_fixes=True, settings=settings, now=NOW)
    assert again.fixed == result.fixed and again.applied == ()
