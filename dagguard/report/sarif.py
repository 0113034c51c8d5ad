"""SARIF 2.1.0, for GitHub code scanning and other static-analysis dashboards."""

from __future__ import annotations

import json
from pathlib import PurePath
from urllib.parse import quote

from dagguard import __version__
from dagguard.engine.results import CheckResult
from dagguard.rule_info import RULE_INFO   # not the rules: a cached run need not import libcst

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def artifact_uri(path: str) -> str:
    """The path as a URI reference: percent-encoded (a space or a comma is not allowed raw);
    relative paths stay relative to the folder the check ran in, absolute ones are file: URIs."""
    pure = PurePath(path)
    if pure.is_absolute():
        return pure.as_uri()
    return quote(pure.as_posix(), safe="/")


def format_sarif(result: CheckResult, color: bool) -> str:
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "defaultConfiguration": {"level": "error" if rule.severity == "error" else "warning"},
        }
        for rule in RULE_INFO
    ]
    index = {rule.code: i for i, rule in enumerate(RULE_INFO)}
    results = [
        {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": "error" if f.severity == "error" else "warning",
            "message": {"text": f.message + (f"\nhelp: {f.help}" if f.help else "")},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": artifact_uri(f.path)},
                    "region": {"startLine": f.line, "startColumn": f.column,
                               "endLine": f.end_line, "endColumn": f.end_column},
                }
            }],
        }
        for f in result.findings
    ]
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "dagguard", "version": __version__, "rules": rules}},
            "results": results,
        }],
    }
    return json.dumps(log, indent=2) + "\n"
