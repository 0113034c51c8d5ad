"""A JSON array of findings and nothing else."""

from __future__ import annotations

import json

from dagguard.engine.runner import CheckResult


def format_json(result: CheckResult, color: bool) -> str:
    return json.dumps([f.to_dict() for f in result.findings], indent=2) + "\n"
