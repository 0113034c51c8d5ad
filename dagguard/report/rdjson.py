"""reviewdog's Diagnostic JSON (rdjson), for `reviewdog -f=rdjson`."""

from __future__ import annotations

import json

from dagguard.engine.results import CheckResult


def format_rdjson(result: CheckResult, color: bool) -> str:
    diagnostics = [
        {
            "message": f.message + (f"\nhelp: {f.help}" if f.help else ""),
            "location": {
                "path": f.path,
                "range": {"start": {"line": f.line, "column": f.column},
                          "end": {"line": f.end_line, "column": f.end_column}},
            },
            "severity": "ERROR" if f.severity == "error" else "WARNING",
            "code": {"value": f.code},
        }
        for f in result.findings
    ]
    report = {"source": {"name": "dagguard"}, "severity": "WARNING", "diagnostics": diagnostics}
    return json.dumps(report, indent=2) + "\n"
