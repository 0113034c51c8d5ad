"""The rule registry: every rule, in code order. The engine knows rules only through here.

The per-file rules import libcst and the model (~0.4 s), so the registry names each rule's
module and imports them all on the first use of ALL_RULES, RULES_BY_CODE or SYNTAX_ERROR. A
run whose results all come from the cache resolves rule selections from RULE_CODES and runs
the cross-file rules from project_rules() without importing any of that.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from dagguard.rule_codes import PROJECT_RULE_CODES, RULE_CODES, RULE_MODULES
from dagguard.rules.rule import ProjectRule, Rule

_INSTANCES: dict[str, Rule] = {}   # one instance per rule, whichever way it was first reached


def _rule(code: str) -> Rule:
    rule = _INSTANCES.get(code)
    if rule is None:
        module, cls = next((m, c) for known, m, c in RULE_MODULES if known == code)
        rule = _INSTANCES[code] = getattr(import_module(f"dagguard.rules.{module}"), cls)()
    return rule


def project_rules() -> tuple[ProjectRule, ...]:
    """The cross-file rules, imported without the per-file ones."""
    rules = tuple(_rule(code) for code in PROJECT_RULE_CODES)
    return tuple(rule for rule in rules if isinstance(rule, ProjectRule))


if TYPE_CHECKING:
    ALL_RULES: tuple[Rule, ...]
    RULES_BY_CODE: dict[str, Rule]
    SYNTAX_ERROR: Rule


def __getattr__(name: str) -> Any:
    # PEP 562: the full registry is built on first use, then kept as module attributes.
    if name == "SYNTAX_ERROR":   # tree-free: a cached run may report an unreadable folder
        globals()[name] = _rule("DG000")
    elif name in ("ALL_RULES", "RULES_BY_CODE"):
        all_rules = tuple(_rule(code) for code in RULE_CODES)
        globals().update(ALL_RULES=all_rules, RULES_BY_CODE={rule.code: rule for rule in all_rules})
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return globals()[name]


__all__ = ["ALL_RULES", "PROJECT_RULE_CODES", "RULES_BY_CODE", "RULE_CODES", "SYNTAX_ERROR", "ProjectRule", "Rule",
           "project_rules"]
