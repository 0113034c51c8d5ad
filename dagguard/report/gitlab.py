"""GitLab's code-quality report (a subset of Code Climate's JSON), for merge-request widgets."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

from dagguard.engine.results import CheckResult

_SEVERITY = {"error": "major", "warning": "minor"}


def format_gitlab(result: CheckResult, color: bool) -> str:
    seen: Counter[str] = Counter()
    issues = []
    for f in result.findings:
        # Stable across runs and line moves, so GitLab can tell new findings from fixed ones; the
        # counter keeps two equal findings in one file apart.
        key = f"{f.path}\0{f.code}\0{f.message}"
        seen[key] += 1
        fingerprint = hashlib.sha256(f"{key}\0{seen[key]}".encode()).hexdigest()
        issues.append({
            "check_name": f.code,
            "description": f"{f.code} {f.message}",
            "severity": _SEVERITY.get(f.severity, "minor"),
            "fingerprint": fingerprint,
            "location": {"path": f.path, "lines": {"begin": f.line, "end": f.end_line}},
        })
    return json.dumps(issues, indent=2) + "\n"
