"""Which definitions exclude each other: different branches of one if/elif/else or match."""

from __future__ import annotations

import libcst as cst

from dagguard.model.dags.branches import branch_paths, exclusive

SOURCE = """\
if a:
    A()
elif b:
    B()
else:
    if c:
        C()
    D()
E() if q else F()
match v:
    case 1:
        G()
    case _:
        H()
for x in xs:
    if x:
        I()
    else:
        J()
K()
"""


def _exclusive_pairs():
    module = cst.parse_module(SOURCE)
    calls: list[cst.Call] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            calls.append(node)

    module.visit(Calls())
    paths = branch_paths(module, calls)
    name = {id(call): call.func.value for call in calls}
    return {(name[id(a)], name[id(b)]) for a in calls for b in calls
            if exclusive(paths[id(a)], paths[id(b)])}


def test_branches_of_one_if_elif_else_exclude_each_other_at_any_depth():
    pairs = _exclusive_pairs()
    assert {("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D")} <= pairs
    assert ("C", "D") not in pairs  # D runs whether or not C's `if c` does


def test_conditional_expressions_and_match_cases_are_branches_too():
    pairs = _exclusive_pairs()
    assert {("E", "F"), ("G", "H")} <= pairs


def test_branches_inside_a_loop_and_unconditional_code_exclude_nothing():
    pairs = _exclusive_pairs()
    assert not {p for p in pairs if "I" in p or "J" in p or "K" in p}
    assert all((b, a) in pairs for a, b in pairs)  # symmetric
