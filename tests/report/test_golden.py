"""Every output format, byte for byte, against a golden file in tests/report/golden/.

After an intended change, regenerate with DAGGUARD_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dagguard import __version__
from dagguard.engine.findings import Finding
from dagguard.engine.runner import CheckResult
from dagguard.report import FORMATS, formatter

GOLDEN = Path(__file__).parent / "golden"
SOURCE = """\
import pendulum
from airflow.sdk import DAG

with DAG(
    dag_id="orders_hourly",
    schedule="@hourly",
\tstart_date=pendulum.datetime(2025, 10, 1, tz="UTC"),
    catchup=True,
):
    pass
"""
FIRST = "dags/my dags/a,b.py"
FINDINGS = (
    # A DAG-wide finding spans several lines; its message holds characters formats must escape.
    Finding(path=FIRST, line=4, column=6, code="DG102", rule="missing-max-active-runs", severity="warning",
            end_line=9, end_column=2, message="DAG 'orders_hourly' sets no max_active_runs: 100% <of> \"16\"",
            help="set max_active_runs=1", dag_id="orders_hourly",
            fixable=True, fix_safety="unsafe", fix_description="add max_active_runs=1"),
    Finding(path=FIRST, line=7, column=2, code="DG104", rule="dynamic-start-date", severity="error",
            end_line=7, end_column=53, message="start_date moves", dag_id="orders_hourly"),
    Finding(path=FIRST, line=8, column=5, code="DG101", rule="catchup-without-end-date", severity="error",
            end_line=8, end_column=17, message="DAG 'orders_hourly' enables catchup without end_date",
            help="set end_date=... or catchup=False", dag_id="orders_hourly",
            fixable=True, fix_safety="unsafe", fix_description="set catchup=False"),
    Finding(path="dags/other.py", line=1, column=1, code="DG000", rule="syntax-error", severity="error",
            end_line=1, end_column=1, message="SyntaxError: invalid syntax"),
)
# With --unsafe-fixes, so the human formats mark the two fixable findings [*] as ruff does.
RESULT = CheckResult(findings=FINDINGS, files_checked=3, dag_count=2, clean_dag_count=0,
                     sources={FIRST: SOURCE, "dags/other.py": "def (:\n"}, unsafe_fixes=True)
CLEAN = CheckResult(findings=(), files_checked=2, dag_count=2, clean_dag_count=2)
EXTENSIONS = {"json": "json", "json-lines": "jsonl", "junit": "xml", "gitlab": "json", "sarif": "json",
              "rdjson": "json"}


def _golden(name: str) -> Path:
    return GOLDEN / f"{name}.{EXTENSIONS.get(name.removesuffix('-clean'), 'txt')}"


def _check(name: str, output: str) -> None:
    output = output.replace(f'"version": "{__version__}"', '"version": "<version>"')
    path = _golden(name)
    if os.environ.get("DAGGUARD_UPDATE_GOLDEN"):
        path.write_text(output, encoding="utf-8")
    assert output == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", FORMATS)
def test_format_matches_its_golden_file(name):
    _check(name, formatter(name)(RESULT, False))


@pytest.mark.parametrize("name", FORMATS)
def test_format_of_a_clean_run_matches_its_golden_file(name):
    _check(f"{name}-clean", formatter(name)(CLEAN, False))


def test_machine_formats_parse():
    for name in ("json", "gitlab", "sarif", "rdjson"):
        json.loads(formatter(name)(RESULT, False))
    lines = formatter("json-lines")(RESULT, False).splitlines()
    assert [json.loads(line)["code"] for line in lines] == [f.code for f in FINDINGS]
    import xml.etree.ElementTree as ET

    root = ET.fromstring(formatter("junit")(RESULT, False))
    assert root.get("failures") == str(len(FINDINGS))
    assert [case.find("failure").get("message") for case in root.iter("testcase")] == [f.message for f in FINDINGS]


def test_gitlab_fingerprints_are_unique_and_stable():
    twice = CheckResult(findings=(FINDINGS[0], FINDINGS[0]), files_checked=1, dag_count=1, clean_dag_count=0)
    issues = json.loads(formatter("gitlab")(twice, False))
    assert len({issue["fingerprint"] for issue in issues}) == 2
    assert issues == json.loads(formatter("gitlab")(twice, False))


def test_github_omits_columns_on_a_multi_line_annotation():
    """GitHub's toolkit forbids col/endColumn when line and endLine differ."""
    first, second = formatter("github")(RESULT, False).splitlines()[:2]
    assert "line=4,endLine=9::" in first and "col=" not in first and "endColumn=" not in first
    assert "line=7,col=2,endLine=7,endColumn=53::" in second


def test_text_alias_is_concise():
    assert formatter("text")(RESULT, False) == formatter("concise")(RESULT, False)


def test_colour_only_when_asked_in_every_human_format():
    for name in ("concise", "full", "grouped"):
        assert "\x1b[" in formatter(name)(RESULT, True)
        assert "\x1b[" not in formatter(name)(RESULT, False)
