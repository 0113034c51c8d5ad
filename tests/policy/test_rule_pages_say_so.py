"""Each rule page says, on the line under its severity, whether the cluster policy applies it,
and that line agrees with the rules the policy runs."""

from __future__ import annotations

import pytest

from dagguard.policy.findings import POLICY_RULES
from dagguard.rules import RULE_CODES
from dagguard.rules.pages import page_text


@pytest.mark.parametrize("code", RULE_CODES)
def test_the_page_says_whether_the_policy_applies_the_rule(code):
    severity, policy = page_text(code).split("\n")[2:4]
    assert severity.startswith("Severity: ")
    assert policy.startswith("Cluster policy: applied (" if code in POLICY_RULES else "Cluster policy: not applied (")
    assert policy.endswith(")")
