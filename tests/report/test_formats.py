"""Reporters: exact shapes that CI systems parse."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from dagguard.engine.findings import Finding
from dagguard.engine.runner import CheckResult
from dagguard.report import formatter
from dagguard.report.json_format import indented_json

FINDING = Finding(path="dags/a,b.py", line=3, column=5, code="DG101", rule="catchup-without-end-date",
                  severity="error", end_line=3, end_column=17,
                  message="DAG 'x' enables catchup: 100% of\nruns", help="set end_date", dag_id="x")
RESULT = CheckResult(findings=(FINDING,), files_checked=2, dag_count=3, clean_dag_count=2)


def test_text_is_ruff_shaped_with_help_and_summary():
    lines = formatter("text")(RESULT, False).splitlines()
    assert lines[0].startswith("dags/a,b.py:3:5: DG101 DAG 'x' enables catchup")
    assert "  help: set end_date" in lines
    assert lines[-1] == "Found 1 problem in 1 file (2 DAGs clean)"


def test_text_colour_only_when_asked():
    assert "\x1b[" in formatter("text")(RESULT, True)
    assert "\x1b[" not in formatter("text")(RESULT, False)


def test_clean_summary():
    clean = CheckResult(findings=(), files_checked=1, dag_count=1, clean_dag_count=1)
    assert formatter("text")(clean, False) == "All checks passed: 1 file, 1 DAG clean\n"


def test_github_escapes_properties_and_data():
    line = formatter("github")(RESULT, False).strip()
    assert line.startswith("::error title=dagguard (DG101),file=dags/a%2Cb.py,line=3,col=5,endLine=3,endColumn=17::")
    assert "%0A" in line and "%25" in line and "\n" not in line


def test_json_round_trips_every_field():
    [data] = json.loads(formatter("json")(RESULT, False))
    assert data == FINDING.to_dict()
    assert list(data)[:3] == ["code", "rule", "severity"]


def test_sarif_region_and_rule_index():
    log = json.loads(formatter("sarif")(RESULT, False))
    run = log["runs"][0]
    result = run["results"][0]
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "DG101"
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 17}


def _fixable(line: int, column: int, safety: str) -> Finding:
    return Finding(path="d.py", line=line, column=column, code="DG106", rule="airflow3-removed-argument",
                   severity="error", end_line=line, end_column=column + 1, message="passes schedule_interval",
                   fixable=True, fix_safety=safety, fix_description="rename")


def test_full_and_grouped_mark_fixable_findings_as_ruff_does():
    result = CheckResult(findings=(_fixable(4, 6, "safe"), _fixable(12, 10, "unsafe")), files_checked=1,
                         dag_count=1, clean_dag_count=0, sources={"d.py": "x = 1\n" * 12})
    full = formatter("full")(result, False).splitlines()
    assert "DG106 [*] passes schedule_interval" in full and "DG106 passes schedule_interval" in full
    grouped = formatter("grouped")(result, False).splitlines()
    # ruff's grouped layout: line numbers right-aligned, columns left-aligned.
    assert grouped[1:3] == ["   4:6  DG106 [*] passes schedule_interval", "  12:10 DG106 passes schedule_interval"]
    assert "DG106 [*] passes" in formatter("full")(replace(result, unsafe_fixes=True), False).split("-->")[1]


def test_what_fix_left_is_never_marked():
    # ruff: in --fix mode a finding whose fix applied would have been fixed; none is marked.
    left = CheckResult(findings=(_fixable(4, 6, "safe"),), files_checked=1, dag_count=1, clean_dag_count=0,
                       fixed=2, after_fixes=True)
    for name in ("concise", "full", "grouped"):
        assert "DG106 passes schedule_interval" in formatter(name)(left, False), name
        assert "[*] passes" not in formatter(name)(left, False), name


@pytest.mark.parametrize("value", [
    [], {}, [{}], [[]], "plain", 7, None, True, (1, (2,)),
    {"a": [1, 2, {"b": None, "c": False}], "é": "x\u2028\n\"y\\ \x00 \U0001f600"},
    [1.5, float("nan"), float("inf"), -0.0, 1e300, -7],
    {"outer": {1: 2, "z": [1.0, {"q": []}]}},   # non-string keys and floats: json's own text
], ids=repr)
def test_indented_json_is_json_dumps_byte_for_byte(value):
    assert indented_json(value) == json.dumps(value, indent=2)


def test_the_json_report_is_json_dumps_of_the_findings():
    findings = (FINDING, replace(FINDING, message="naïve \"quoted\" line\nbreak", help=None, dag_id=None))
    result = CheckResult(findings, 1, 1, 0)
    assert formatter("json")(result, False) == json.dumps([f.to_dict() for f in findings], indent=2) + "\n"
