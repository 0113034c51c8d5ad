"""JUnit XML, as ruff writes it: one test suite per file, one failed test case per finding."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from dagguard.engine.results import CheckResult


def format_junit(result: CheckResult, color: bool) -> str:
    count = str(len(result.findings))
    # A clean run is one passing test case, so CI shows that the check ran.
    root = ET.Element("testsuites", name="dagguard", tests=count if result.findings else "1", failures=count,
                      errors="0")
    if not result.findings:
        suite = ET.SubElement(root, "testsuite", name="dagguard", tests="1", disabled="0", errors="0",
                              failures="0", package="org.dagguard")
        ET.SubElement(suite, "testcase", name="No problems found")
    for path, findings in groupby(result.findings, key=lambda f: f.path):
        group = list(findings)
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(group)), disabled="0", errors="0",
                              failures=str(len(group)), package="org.dagguard")
        for f in group:
            case = ET.SubElement(suite, "testcase", name=f"org.dagguard.{f.code}", classname=path,
                                 line=str(f.line), column=str(f.column))
            failure = ET.SubElement(case, "failure", message=f.message)
            failure.text = f"line {f.line}, col {f.column}, {f.message}" + (f"\nhelp: {f.help}" if f.help else "")
    ET.indent(root, space="    ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
