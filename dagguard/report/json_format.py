"""JSON: an array of findings and nothing else; JSON Lines: one finding object per line."""

from __future__ import annotations

import json

from dagguard.engine.results import CheckResult


def format_json(result: CheckResult, color: bool) -> str:
    return json.dumps([f.to_dict() for f in result.findings], indent=2) + "\n"


def format_json_lines(result: CheckResult, color: bool) -> str:
    return "".join(json.dumps(f.to_dict()) + "\n" for f in result.findings)
