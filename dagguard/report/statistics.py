"""`--statistics`: how many findings each rule has, most first, as ruff prints them."""

from __future__ import annotations

import json
from collections import Counter

from dagguard.engine.findings import fix_applies
from dagguard.engine.results import CheckResult


def rule_counts(result: CheckResult) -> list[dict[str, object]]:
    """One entry per rule with findings: code, name, count, fixable (as ruff: some finding's fix
    applies in this run); most findings first."""
    counts = Counter(f.code for f in result.findings)
    first = {}
    for f in result.findings:
        first.setdefault(f.code, f)
    fixable = {f.code for f in result.findings if fix_applies(f.fix_safety, result.unsafe_fixes)}
    return [{"code": code, "name": first[code].rule, "count": count, "fixable": code in fixable}
            for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def format_statistics(result: CheckResult, as_json: bool) -> str:
    rows = rule_counts(result)
    if as_json:
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(row["count"])) for row in rows), default=1)
    return "".join(f"{row['count']:>{width}}\t{row['code']}\t{'[*]' if row['fixable'] else '[ ]'} {row['name']}\n"
                   for row in rows)
