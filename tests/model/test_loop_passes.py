"""The passes of a `for` loop the file states, and the `if` tests they decide (model/basics/loop_passes.py)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from dagguard.model.basics.loop_passes import MAX_PASSES, loop_passes, decided_by_pass
from dagguard.model.basics.scope import module_scope
from dagguard.model.basics.values import UNKNOWN


def _loop(code: str):
    module = cst.parse_module(textwrap.dedent(code))
    loop = next(stmt for stmt in module.body if isinstance(stmt, cst.For))
    return loop, module_scope(module)


@pytest.mark.parametrize("code, expected", [
    ('CHAINS = {"eth_data": "eth", "polygon_data": "polygon"}\nfor db, name in CHAINS.items():\n    pass\n',
     [{"db": "eth_data", "name": "eth"}, {"db": "polygon_data", "name": "polygon"}]),
    ('for name in ["a", "b"]:\n    pass\n', [{"name": "a"}, {"name": "b"}]),
    ('D = {"a": 1}\nfor key in D:\n    pass\n', [{"key": "a"}]),
    ('D = {"a": 1}\nfor value in D.values():\n    pass\n', [{"value": 1}]),
    ('for i in range(2, 4):\n    pass\n', [{"i": 2}, {"i": 3}]),
    ('import os\nfor name, value in [("a", os.environ["X"])]:\n    pass\n', [{"name": "a", "value": UNKNOWN}]),
])
def test_the_passes_of_a_loop_over_what_the_file_states(code, expected):
    loop, scope = _loop(code)
    assert loop_passes(loop, scope, {}) == expected


@pytest.mark.parametrize("code", [
    'import os\nfor name in os.listdir("."):\n    pass\n',                      # read at parse time
    'for name in ["a", "b"]:\n    if name == "a":\n        break\n',             # a pass cut short
    'for name in ["a", "b"]:\n    continue\n',
    'for name in ["a", "b"]:\n    name = name.upper()\n',                        # the target rebound
    'for name in ["a", "b"]:\n    for name in ["c"]:\n        pass\n',
    f'for i in range({MAX_PASSES + 1}):\n    pass\n',                            # too many to walk
    'for first, *rest in [("a", "b", "c")]:\n    pass\n',
    'D = {"a": 1, **OTHER}\nfor key in D:\n    pass\n',                        # keys not all known
])
def test_a_loop_whose_passes_are_not_known(code):
    loop, scope = _loop(code)
    assert loop_passes(loop, scope, {}) is None


def test_an_item_assignment_in_the_body_rebinds_no_target():
    loop, scope = _loop('out = {}\nfor name in ["a"]:\n    out[name] = 1\n')
    assert loop_passes(loop, scope, {}) == [{"name": "a"}]


@pytest.mark.parametrize("test, bindings, expected", [
    ('name == "eth"', {"name": "eth"}, True),
    ('name == "eth"', {"name": "polygon"}, False),
    ('"eth" != name', {"name": "eth"}, False),
    ('name in ("a", "b")', {"name": "b"}, True),
    ('name not in ["a"]', {"name": "b"}, True),
    ('not name == "a"', {"name": "a"}, False),
    ('name == "a" or other == "x"', {"name": "a"}, True),        # decided whatever `other` is
    ('name == "a" and other == "x"', {"name": "b"}, False),
    ('name == "a" and other == "x"', {"name": "a"}, None),
    ('value is None', {"value": None}, True),
    ('value == 1', {"value": UNKNOWN}, None),
    ('os.environ.get(name)', {"name": "a"}, None),
    ('name == "a"', {}, None),
])
def test_the_if_tests_a_pass_decides(test, bindings, expected):
    module = cst.parse_module("")
    assert decided_by_pass(cst.parse_expression(test), module_scope(module), bindings) is expected
