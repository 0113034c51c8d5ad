"""--add-noqa: a noqa for every finding, merged into an existing one, lossless, idempotent;
noqa hygiene: a `# noqa:` naming no code silences nothing, unknown dagguard codes warn."""

from __future__ import annotations

import shutil

from dagguard.api import add_noqa, check_paths
from dagguard.config import Settings
from dagguard.engine.add_noqa import add_noqa_to_text
from dagguard.engine.noqa import noqa_warnings, parse_noqa
from dagguard.rules import RULES_BY_CODE
from tests.lint_helpers import NOW, codes, lint


def test_add_noqa_then_check_finds_nothing_on_the_example_dags(repo_root, tmp_path, monkeypatch):
    shutil.copytree(repo_root / "example_dags", tmp_path / "example_dags")
    monkeypatch.chdir(tmp_path)
    before = check_paths(["example_dags"], settings=Settings(), now=NOW)
    assert before.findings
    added = add_noqa(["example_dags"], settings=Settings(), now=NOW)
    assert added > 0
    after = check_paths(["example_dags"], settings=Settings(), now=NOW)
    assert after.findings == () and after.warnings == ()
    snapshot = {p: p.read_bytes() for p in (tmp_path / "example_dags").glob("*.py")}
    assert add_noqa(["example_dags"], settings=Settings(), now=NOW) == 0
    assert {p: p.read_bytes() for p in snapshot} == snapshot


def test_merges_into_an_existing_noqa_and_keeps_everything_else():
    text = "a = 1  # noqa: E501 long line\r\nb = 2  # why\r\nc = 3\r\n"
    assert add_noqa_to_text(text, {1: {"DG101"}, 2: {"DG102", "DG101"}, 3: {"DG103"}}) == (
        "a = 1  # noqa: E501, DG101 long line\r\nb = 2  # why  # noqa: DG101, DG102\r\nc = 3  # noqa: DG103\r\n")


def test_a_bare_noqa_needs_nothing_and_an_invalid_one_gets_the_codes():
    text = "a = 1  # noqa\nb = 2  # noqa: typo\n"
    assert add_noqa_to_text(text, {1: {"DG101"}, 2: {"DG101"}}) == "a = 1  # noqa\nb = 2  # noqa: DG101 typo\n"


def test_a_finding_inside_a_multiline_string_gets_its_noqa_after_the_string():
    text = 'sql = """\nSELECT {{ execution_date }}\n"""\nx = 1\n'
    fixed = add_noqa_to_text(text, {2: {"DG205"}})
    assert fixed == 'sql = """\nSELECT {{ execution_date }}\n"""  # noqa: DG205\nx = 1\n'
    assert parse_noqa(fixed)[2] == frozenset({"DG205"})


def test_noqa_inside_a_string_is_not_a_comment():
    assert parse_noqa('x = "# noqa"\n') == {}


def test_noqa_naming_no_code_is_not_a_blanket_noqa(tmp_path):
    source = ("import pendulum\nfrom airflow.sdk import DAG\n\n"
              "with DAG('x', schedule='@daily', start_date=pendulum.datetime(2025, 1, 1),  # noqa: typo\n"
              "         catchup=True):\n    pass\n")
    assert {"DG102", "DG103"} <= set(codes(lint(tmp_path, source)))


def test_unknown_dagguard_codes_and_empty_lists_warn_other_tools_codes_do_not():
    text = "a  # noqa: DG999\nb  # noqa: typo\nc  # noqa: E501, DG101\nd  # noqa\n"
    assert noqa_warnings(text, RULES_BY_CODE) == [
        (1, "`# noqa` names DG999, which is not a dagguard rule"),
        (2, "`# noqa:` names no rule code ('typo'), so it silences nothing"),
    ]


def test_warnings_reach_the_check_result(tmp_path):
    # The file must be one dagguard parses: a file that cannot touch a DAG is skipped unread.
    dag = tmp_path / "d.py"
    dag.write_text("from airflow.sdk import DAG\nx = 1  # noqa: DG199\n")
    assert check_paths([dag], settings=Settings(), now=NOW).warnings[0].endswith(
        ":2: `# noqa` names DG199, which is not a dagguard rule")
