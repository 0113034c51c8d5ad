"""dagguard/rule_info.py, every rule's metadata without the rules, is what the rule classes say.

The table in it is generated from the classes; when a rule's name, severity, fixability or summary
changes, or a rule is added, regenerate it:

    PYTHONPATH=$PWD python tests/rules/test_rule_info.py --write
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RULE_INFO_FILE = REPO / "dagguard" / "rule_info.py"

# Everything up to this line of rule_info.py is written by hand (its docstring, RuleInfo); the
# rows after it are generated.
TABLE_START = "RULE_INFO: tuple[RuleInfo, ...] = (\n"


def rendered() -> str:
    """The text rule_info.py must hold: its hand-written head, then a row per rule class."""
    from dagguard.rules import ALL_RULES

    text = RULE_INFO_FILE.read_text(encoding="utf-8")
    head = text[:text.index(TABLE_START) + len(TABLE_START)]
    rows = "".join(f"    RuleInfo({r.code!r}, {r.name!r}, {r.severity!r}, {bool(r.fixable)!r},\n"
                   f"             {r.summary!r}),\n" for r in ALL_RULES)
    return head + rows + ")\n"


def test_rule_info_is_what_the_rule_classes_say() -> None:
    assert RULE_INFO_FILE.read_text(encoding="utf-8") == rendered(), (
        "dagguard/rule_info.py differs from the rule classes; run "
        "`PYTHONPATH=$PWD python tests/rules/test_rule_info.py --write`")


def test_rule_info_matches_every_rule_object_field_by_field() -> None:
    # Independent of the rendering: the imported table against the live rule objects.
    from dagguard.rule_info import RULE_INFO
    from dagguard.rules import ALL_RULES

    assert [(i.code, i.name, i.severity, i.fixable, i.summary) for i in RULE_INFO] == [
        (r.code, r.name, r.severity, bool(r.fixable), r.summary) for r in ALL_RULES]


def test_rule_info_loads_without_the_rules_or_libcst() -> None:
    probe = ("import sys; from dagguard.rule_info import RULE_INFO; "
             "print(len(RULE_INFO), sorted(m for m in sys.modules if m.startswith(('libcst', 'dagguard.rules'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    count, loaded = done.stdout.split(None, 1)
    assert int(count) > 20 and loaded.strip() == "[]"


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: PYTHONPATH=$PWD python tests/rules/test_rule_info.py --write")
    RULE_INFO_FILE.write_text(rendered(), encoding="utf-8")
