"""Our targeted locator agrees with libcst's PositionProvider on every node it is asked about."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from dagguard.engine import positions as positions_module
from dagguard.engine.positions import locate, locate_in_regions
from dagguard.rules.pages import examples

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "example_dags").glob("*.py"))
RULE_PAGES = sorted((Path(__file__).resolve().parents[2] / "rules").glob("DG*.md"))
_LOCATED = (cst.Call, cst.Name, cst.SimpleString, cst.Attribute, cst.Arg, cst.FunctionDef, cst.Decorator)


def _provider_spans(module: cst.Module, kinds: tuple[type, ...] = _LOCATED):
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {node: positions[node] for node in positions if isinstance(node, kinds)}


def _assert_statementwise_matches_provider(source: str, tree=None) -> int:
    """Located statement by statement (with CPython's tree), every node's span is the one
    libcst's PositionProvider gives (keyword arguments and definitions are anchored on their
    keyword and name, as findings underline them, so only plain nodes are compared)."""
    module = cst.parse_module(source)
    expected = _provider_spans(module, (cst.Call, cst.Name, cst.SimpleString, cst.Attribute))
    nodes = list(expected)
    spans, _ = locate_in_regions(module, nodes, {}, source, tree)
    for node, position in expected.items():
        span = spans[id(node)]
        assert (span.line, span.column, span.end_line, span.end_column) == (
            position.start.line, position.start.column + 1, position.end.line, position.end.column + 1
        ), module.code_for_node(node)
    # Anchored nodes (Arg, FunctionDef, Decorator) agree with the whole-module generation.
    anchored = list(_provider_spans(module, _LOCATED))
    assert locate_in_regions(module, anchored, {}, source, tree)[0] == locate(module, anchored)
    return len(nodes)


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


TRICKY_SOURCES = {
    "decorators": "import x\n\n# a comment\n@x.a\n@(\n    x.b\n)\n\n@x.c(1)\ndef f(a=g(1)):\n    return h(a)\n",
    # CPython places a decorator at its expression, inside the brackets: two lines off.
    "a first decorator split inside its brackets": "import x\n@(\n\n    x.b\n)\ndef f():\n    return h(1)\n",
    "several statements on one line": "a = f(1); b = g(2)\nc = h(3); d = k(4);\n",
    "comments, blank lines and a header": "#!/usr/bin/env python\n# header\n\n\nx = f(1)  # trailing\n\n\n# lead\ny = g(2)\n",
    "CRLF": "a = f(1)\r\n\r\nif a:\r\n    b = g(2)\r\n",
    "CR alone": "a = f(1)\r\rb = g(2)\r",
    "form feed and U+2028 inside lines": "\x0ca = f('\u2028')\n\x0c\nb = g('x\x0cy')\n",
    "no newline at the end": "a = f(1)\nb = g(2)",
    "multi-line strings and continuations": 'a = f("""\none\ntwo""")\nb = g(1, \\\n      2)\nc = h(3)\n',
    "compound statements": (
        "class C(B):\n    @staticmethod\n    def m():\n        return f(1)\n\n"
        "async def run():\n    async with x() as y:\n        await y(2)\n"
        "try:\n    g(3)\nexcept E:\n    h(4)\nelse:\n    k(5)\nfinally:\n    m(6)\n"
        "for i in r(7):\n    n(i)\nwhile w(8):\n    break\n"
        "match p(9):\n    case [a]:\n        q(10)\n"),
    "leading blank lines before the first statement": "\n\n\nx = f(1)\n",
}


# Where libcst's statements do not start where CPython's tree says, the module is generated.
WHOLE_MODULE = {"a first decorator split inside its brackets", "form feed and U+2028 inside lines"}


@pytest.mark.parametrize("name", sorted(TRICKY_SOURCES))
def test_statementwise_locating_matches_position_provider(name, monkeypatch):
    ways: list[bool] = []
    original = positions_module._generate_statements

    def recording(*args):
        ways.append(original(*args))
        return ways[-1]

    monkeypatch.setattr(positions_module, "_generate_statements", recording)
    source = TRICKY_SOURCES[name]
    assert _assert_statementwise_matches_provider(source) > 0
    assert ways and all(way is (name not in WHOLE_MODULE) for way in ways)


def test_statementwise_locating_matches_position_provider_on_examples_and_rule_pages():
    sources = [path.read_text() for path in EXAMPLES]
    sources += [example.code for page in RULE_PAGES for example in examples(page.read_text())]
    parsed = [source for source in sources if _parses(source)]   # DG000's examples do not
    checked = sum(_assert_statementwise_matches_provider(source) for source in parsed)
    assert len(parsed) > 60 and checked > 2000


def _parses(source: str) -> bool:
    try:
        cst.parse_module(source)
        return True
    except cst.ParserSyntaxError:
        return False


def test_only_the_statements_holding_a_node_are_generated(monkeypatch):
    source = "".join(f"task_{i} = make(i={i}, name='t{i}', extra=[1, 2, 3])\n" for i in range(500))
    module = cst.parse_module(source)
    wanted = module.body[400].body[0].value          # one call, near the end
    generated: list[cst.CSTNode] = []
    original = positions_module._LocatingState.before_codegen

    def counting(self, node):
        generated.append(node)
        original(self, node)

    monkeypatch.setattr(positions_module._LocatingState, "before_codegen", counting)
    span = locate_in_regions(module, [wanted], {}, source, ast.parse(source))[0][id(wanted)]
    assert (span.line, span.column) == (401, 12)   # after `task_400 = `
    statement_nodes = len(generated)
    generated.clear()
    assert locate(module, [wanted])[id(wanted)] == span   # the whole-module way, for scale
    assert statement_nodes * 50 < len(generated)


def test_a_tree_that_does_not_line_up_falls_back_to_generating_the_module():
    source = "a = f(1)\n\n\nb = g(2)\nc = h(3)\n"
    shifted = ast.parse("\n\n" + source)              # every statement two lines off
    module = cst.parse_module(source)
    calls = [stmt.body[0].value for stmt in module.body]
    assert locate_in_regions(module, calls, {}, source, shifted)[0] == locate(module, calls)
    assert _assert_statementwise_matches_provider(source, shifted) == 9
    fewer = ast.parse("a = f(1)\n")                   # fewer statements than libcst's
    assert locate_in_regions(module, calls, {}, source, fewer)[0] == locate(module, calls)
