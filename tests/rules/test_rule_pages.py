"""Every rule has a page, and every example on every page behaves as the page says."""

from __future__ import annotations


import pytest

from dagguard.api import check_paths
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


def _option_value(text: str):
    if text.isdigit():
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    return text
