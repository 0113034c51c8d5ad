"""What a rule is and what it reports, in one import for the rules: the rule classes (metadata and
check, rules/rule.py, which needs no tree) and the report, its fix and its edits (rules/reports.py)."""

from __future__ import annotations

from dagguard.rules.reports import MADE_AT, SAFE, UNSAFE, Edits, Fix, Import, Replacement, Report
from dagguard.rules.rule import DagSite, ProjectRule, Rule, RuleContext

__all__ = ["MADE_AT", "SAFE", "UNSAFE", "DagSite", "Edits", "Fix", "Import", "ProjectRule", "Replacement", "Report",
           "Rule", "RuleContext"]
