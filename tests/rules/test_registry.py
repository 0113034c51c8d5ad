"""The registry names every rule module once; the cross-file rules load without libcst."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import dagguard.rules as registry
from dagguard.rule_codes import RULE_MODULES
from dagguard.rules import ALL_RULES, PROJECT_RULE_CODES, RULE_CODES, RULES_BY_CODE, SYNTAX_ERROR, ProjectRule

RULES_FOLDER = Path(registry.__file__).parent
REPO = RULES_FOLDER.parents[1]


def test_every_rule_module_is_registered_under_its_own_code() -> None:
    modules = sorted(p.stem for p in RULES_FOLDER.glob("dg[0-9][0-9][0-9]_*.py"))
    assert sorted(module for _, module, _ in RULE_MODULES) == modules
    assert [rule.code for rule in ALL_RULES] == list(RULE_CODES) == sorted(RULE_CODES)
    assert all(module.startswith(code.lower()) for code, module, _ in RULE_MODULES)
    assert list(RULES_BY_CODE) == list(RULE_CODES) and SYNTAX_ERROR is RULES_BY_CODE["DG000"]


def test_the_cross_file_rules_are_exactly_the_project_rules_and_the_same_objects() -> None:
    assert tuple(r.code for r in ALL_RULES if isinstance(r, ProjectRule)) == PROJECT_RULE_CODES
    assert all(rule is RULES_BY_CODE[rule.code] for rule in registry.project_rules())


def test_codes_and_cross_file_rules_load_without_libcst() -> None:
    probe = ("import sys; import dagguard.rules as r; rules = r.project_rules(); syntax = r.SYNTAX_ERROR; "
             "print(len(r.RULE_CODES), [x.code for x in rules], syntax.code, "
             "sorted(m for m in sys.modules if m.startswith(('libcst', 'dagguard.model.dags.builder', 'dagguard.rules.dg1'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.stdout.split(None, 1)[1].strip() == "['DG302'] DG000 []"


def test_the_settings_check_rule_codes_without_importing_the_rules() -> None:
    # Issue 25: config.py read RULE_CODES from dagguard.rules, whose rule.py imports config.
    code = ("import sys\nfrom dagguard.config import parse_table\n"
            "parse_table({'select': ['DG1']}, None)\n"
            "print(sorted(m for m in sys.modules if m.startswith('dagguard.rules')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
