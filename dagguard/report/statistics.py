"""`--statistics`: how many findings each rule has, most first, as ruff prints them."""

from __future__ import annotations

import json
from collections import Counter

from dagguard.engine.findings import fix_applies
from dagguard.engine.results import CheckResult
from dagguard.report.text import with_summary


def rule_counts(result: CheckResult) -> list[dict[str, object]]:
    """One entry per rule with findings: code, name, count, fixable (as ruff: every finding's
    fix applies in this run) and fixable_count; most findings first."""
    counts = Counter(f.code for f in result.findings)
    fixable = Counter(f.code for f in result.findings if fix_applies(f.fix_safety, result.unsafe_fixes))
    first = {}
    for f in result.findings:
        first.setdefault(f.code, f)
    return [{"code": code, "name": first[code].rule, "count": count, "fixable": fixable[code] == count,
             "fixable_count": fixable[code]}
            for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def format_statistics(result: CheckResult, as_json: bool, summary: bool = True) -> str:
    """The table (or its JSON); the text table is followed by the check's summary, as ruff's is."""
    rows = rule_counts(result)
    if as_json:
        return json.dumps(rows, indent=2) + "\n"
    if not rows:
        return ""
    width = max(len(str(row["count"])) for row in rows)
    # ruff marks rules only when some finding is fixable: [*] all of them, [-] some, [ ] none.
    marked = any(row["fixable_count"] for row in rows)
    lines = [f"{row['count']:>{width}}\t{row['code']}\t{_marker(row) if marked else ''}{row['name']}" for row in rows]
    return with_summary(lines, result, False, summary)


def _marker(row: dict[str, object]) -> str:
    return "[*] " if row["fixable"] else "[-] " if row["fixable_count"] else "[ ] "
