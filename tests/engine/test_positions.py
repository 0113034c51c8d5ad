"""Our targeted locator agrees with libcst's PositionProvider on every node it is asked about."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from dagguard.engine.positions import locate, locate_in_regions

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "example_dags").glob("*.py"))


def test_locator_matches_position_provider_on_example_dags():
    assert EXAMPLES, "example_dags/ is empty"
    checked = 0
    for path in EXAMPLES:
        module = cst.parse_module(path.read_bytes())
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        nodes = [n for n in positions if isinstance(n, (cst.Call, cst.Name, cst.SimpleString, cst.Attribute))]
        spans = locate(module, nodes)
        for node in nodes:
            expected = positions[node]
            span = spans[id(node)]
            assert (span.line, span.column, span.end_line, span.end_column) == (
                expected.start.line, expected.start.column + 1, expected.end.line, expected.end.column + 1
            ), (path.name, cst.Module([]).code_for_node(node))
            checked += 1
    assert checked > 100


def test_keyword_argument_span_runs_from_keyword_to_value():
    module = cst.parse_module("f(\n    catchup = True,\n)\n")
    arg = module.body[0].body[0].value.args[0]
    span = locate(module, [arg])[id(arg)]
    assert (span.line, span.column, span.end_line, span.end_column) == (2, 5, 2, 19)


def test_crlf_line_endings():
    module = cst.parse_module("a = 1\r\nb = f(x)\r\n")
    call = module.body[1].body[0].value
    span = locate(module, [call])[id(call)]
    assert (span.line, span.column) == (2, 5)


def test_each_node_gets_its_innermost_enclosing_region_in_the_same_pass():
    module = cst.parse_module("a = 1\nwith x:\n    def f():\n        g(b)\n    c = 2\n")
    with_block = module.body[1]
    function = with_block.body.body[0]
    call = function.body.body[0].body[0].value
    a_name = module.body[0].body[0].targets[0].target
    c_name = with_block.body.body[1].body[0].targets[0].target
    spans, owners = locate_in_regions(module, [a_name, call.args[0], c_name],
                                      {id(with_block.body): "outer", id(function): "inner"})
    assert len(spans) == 3
    assert owners == {id(call.args[0]): "inner", id(c_name): "outer"}
