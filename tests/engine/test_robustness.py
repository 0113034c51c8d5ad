"""No input file, however broken, crashes the checker; a broken file never hides the others."""

from __future__ import annotations

import pytest

from dagguard.api import check_paths
from dagguard.config import Settings
from tests.lint_helpers import NOW

GOOD_DAG = b"from airflow.sdk import DAG\nwith DAG('ok'):\n    pass\n"

BROKEN = {
    "syntax.py": b"from airflow.sdk import DAG\nwith DAG('x', schedule=None:\n    pass\n",
    "binary.py": bytes(range(256)) * 4,
    "latin1_undeclared.py": "x = 'caf\u00e9'\n".encode("latin-1"),
    "bad_declared_encoding.py": b"# -*- coding: no-such-codec -*-\nx = 1\n",
    "unterminated.py": b"x = '''never closed\n",
    "python2.py": b"print 'hello'\n",
    "tabs_and_spaces.py": b"if True:\n\tx = 1\n        y = 2\n",
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_file_is_one_dg000_finding_and_the_others_are_still_checked(tmp_path, name):
    (tmp_path / name).write_bytes(BROKEN[name])
    (tmp_path / "good.py").write_bytes(GOOD_DAG)
    result = check_paths([tmp_path], settings=Settings(), now=NOW)
    broken = [f for f in result.findings if f.path.endswith(name)]
    assert [f.code for f in broken] == ["DG000"]
    assert broken[0].line >= 1 and broken[0].column >= 1 and broken[0].message
    good = {f.code for f in result.findings if f.path.endswith("good.py")}
    assert "DG105" in good
    assert result.internal_errors == ()


def test_syntax_error_reports_cpython_position_and_message(tmp_path):
    (tmp_path / "syntax.py").write_bytes(BROKEN["syntax.py"])
    finding = check_paths([tmp_path], settings=Settings(), now=NOW).findings[0]
    assert (finding.line, finding.message) == (2, "SyntaxError: invalid syntax")


def test_empty_and_declared_latin1_files_are_fine(tmp_path):
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "latin1.py").write_bytes("# -*- coding: latin-1 -*-\nx = 'caf\u00e9'\n".encode("latin-1"))
    result = check_paths([tmp_path], settings=Settings(), now=NOW)
    assert result.findings == () and result.files_checked == 2


def test_huge_file_is_reported_not_parsed(tmp_path, monkeypatch):
    from dagguard.engine import runner

    monkeypatch.setattr(runner, "MAX_FILE_BYTES", 1000)
    (tmp_path / "huge.py").write_bytes(b"x = 1\n" * 1000)
    finding, = check_paths([tmp_path], settings=Settings(), now=NOW).findings
    assert finding.code == "DG000" and "too large" in finding.message


def test_deeply_nested_brackets_do_not_crash(tmp_path):
    # 3,000 nested brackets overflow the main thread's stack inside libcst's native parser.
    (tmp_path / "deep.py").write_text("x = " + "(" * 3000 + "1" + ")" * 3000 + "\n")
    result = check_paths([tmp_path], settings=Settings(), now=NOW)
    assert [f.code for f in result.findings] in ([], ["DG000"])


def test_long_operator_chain_in_a_dag_is_checked(tmp_path):
    # Code generation recurses once per term: 600 terms exceed Python's default limit.
    chain = " + ".join(["'x'"] * 600)
    (tmp_path / "chain.py").write_text(f"from airflow.sdk import DAG\nwith DAG('c', sql={chain}):\n    pass\n")
    result = check_paths([tmp_path], settings=Settings(), now=NOW)
    assert {f.code for f in result.findings} == {"DG105"}


def test_long_file_with_many_statements(tmp_path):
    body = "".join(f"v{i} = {i}\n" for i in range(20000))
    (tmp_path / "long.py").write_text(GOOD_DAG.decode() + body)
    result = check_paths([tmp_path], settings=Settings(), now=NOW)
    assert {f.code for f in result.findings} == {"DG105"}


def test_nul_byte_in_an_escaped_string_is_one_dg000_and_the_others_are_checked(tmp_path):
    # libcst parses it, but evaluating the literal raised SyntaxError and lost every file's result.
    (tmp_path / "nul.py").write_bytes(b'from airflow.sdk import DAG\nDAG("d\\n\x00")\n')
    (tmp_path / "good.py").write_bytes(GOOD_DAG)
    result = check_paths([tmp_path], settings=Settings(), now=NOW)
    nul = [f for f in result.findings if f.path.endswith("nul.py")]
    assert [f.code for f in nul] == ["DG000"] and "null bytes" in nul[0].message
    assert {"DG105"} <= {f.code for f in result.findings if f.path.endswith("good.py")}
    assert result.internal_errors == ()


def test_string_literal_python_cannot_evaluate_is_an_unknown_value(tmp_path):
    # An unknown \\N{...} name: libcst parses it, ast.literal_eval raises SyntaxError.
    (tmp_path / "escape.py").write_bytes(b'from airflow.sdk import DAG\nwith DAG("\\N{no such name}"):\n    pass\n')
    result = check_paths([tmp_path], settings=Settings(), now=NOW)
    assert result.internal_errors == ()
    assert {"DG105"} <= {f.code for f in result.findings}


@pytest.mark.parametrize("step", ["build_file_model", "locate_in_regions"])
def test_an_exception_while_checking_one_file_is_reported_for_it_and_the_rest_goes_on(tmp_path, monkeypatch, step):
    from dagguard.engine import runner

    real = getattr(runner, step)

    def failing_on_boom(module, *args):
        if "boom" in module.code:
            raise KeyError("boom")
        return real(module, *args)

    monkeypatch.setattr(runner, step, failing_on_boom)
    (tmp_path / "bad.py").write_bytes(GOOD_DAG + b"boom = 1\n")
    (tmp_path / "good.py").write_bytes(GOOD_DAG)
    result = check_paths([tmp_path], settings=Settings(), now=NOW)
    assert {f.path.rsplit("/", 1)[-1] for f in result.findings} == {"good.py"}
    assert len(result.internal_errors) == 1 and "bad.py" in result.internal_errors[0]
    assert "KeyError" in result.internal_errors[0]


DEEP = {
    "brackets_5000": "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
    "brackets_100000": "x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n",
    "lists_20000": "x = " + "[" * 20_000 + "1" + "]" * 20_000 + "\n",
    "indentation_300": "".join(" " * i + "if a:\n" for i in range(300)) + " " * 300 + "pass\n",
    "minus_100000": "x = " + "-" * 100_000 + "a\n",
    "not_10000": "x = " + "not " * 10_000 + "a\n",
    "plus_chain_5000": "x = " + " + ".join(["a"] * 5000) + "\n",
    "subscripts_3000": "x = a" + "[0]" * 3000 + "\n",
    "calls_100000": "x = a" + "()" * 100_000 + "\n",
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting_is_refused_before_libcst_and_the_others_are_checked(tmp_path, monkeypatch, name):
    # libcst took 2.7 GB for 5,000 brackets, exhausted memory at 20,000 and crashed at 100,000.
    import libcst

    real_parse = libcst.parse_module
    given: list[int] = []

    def parse_only_shallow(source, *args, **kwargs):
        given.append(len(source))
        if len(source) > 10_000:
            raise RuntimeError("not parsed, to keep the test bounded")
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", parse_only_shallow)
    (tmp_path / "deep.py").write_text(DEEP[name])
    (tmp_path / "good.py").write_bytes(GOOD_DAG)
    result = check_paths([tmp_path], settings=Settings(), now=NOW)
    deep = [f for f in result.findings if f.path.endswith("deep.py")]
    assert [f.code for f in deep] == ["DG000"]
    assert "nested" in deep[0].message or "indentation" in deep[0].message
    assert {"DG105"} <= {f.code for f in result.findings if f.path.endswith("good.py")}
    assert result.internal_errors == ()
    assert max(given) < 10_000, "the deeply nested file reached libcst"


def test_brackets_beyond_cpythons_limit_get_cpythons_message(tmp_path):
    (tmp_path / "deep.py").write_text("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    finding, = check_paths([tmp_path], settings=Settings(), now=NOW).findings
    assert finding.message == "SyntaxError: too many nested parentheses"


def test_nesting_up_to_the_limit_is_still_checked(tmp_path):
    from dagguard.engine.precheck import MAX_EXPRESSION_DEPTH

    chain = " + ".join(["'x'"] * (MAX_EXPRESSION_DEPTH // 2))
    (tmp_path / "chain.py").write_text(f"from airflow.sdk import DAG\nwith DAG('c', doc_md={chain}):\n    pass\n")
    result = check_paths([tmp_path], settings=Settings(), now=NOW)
    assert {f.code for f in result.findings} == {"DG105"}


@pytest.mark.parametrize("layout", ["one line", "one per line"])
def test_large_constant_data_is_not_given_to_libcst_and_positions_stay(tmp_path, monkeypatch, layout):
    # libcst took 116 s and 3.5 GB for a 7 MB list literal; CPython's parser, a twentieth.
    import libcst

    real_parse = libcst.parse_module
    given: list[bool] = []

    def recording(source, *args, **kwargs):
        given.append((b"19999" if isinstance(source, bytes) else "19999") in source)
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", recording)
    separator = ", " if layout == "one line" else ",\n    "
    data = "DATA = [" + separator.join(f'{{"n": {i}, "name": "é{i}"}}' for i in range(20_000)) + "]  # noqa\n"
    dag = "with DAG('after_the_data', tags=DATA):\n    pass\n"
    plain = check_paths([_write(tmp_path / "plain", "dag.py", GOOD_DAG.decode() + dag)], settings=Settings(),
                        now=NOW)
    big = check_paths([_write(tmp_path / "big", "dag.py", GOOD_DAG.decode() + data + dag)], settings=Settings(),
                      now=NOW)
    assert given == [False, False], "the data reached libcst"
    lines = data.count("\n")
    shifted = [(f.code, f.dag_id, f.line - lines if f.dag_id == "after_the_data" else f.line, f.column)
               for f in big.findings]
    assert shifted == [(f.code, f.dag_id, f.line, f.column) for f in plain.findings]
    assert {f.dag_id for f in plain.findings} == {"ok", "after_the_data"}
    assert big.internal_errors == ()


def _write(folder, name, text):
    folder.mkdir()
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


@pytest.mark.parametrize("source", [
    b'from airflow.sdk import DAG\nif __name__ == "\\N{no such name}":\n    pass\nwith DAG("\\N{no such name}"):\n    pass\n',
    b'from airflow.sdk import DAG\nwith DAG("a" "\\N{no such name}"):\n    pass\n',
])
def test_string_literals_python_cannot_evaluate_in_guards_and_concatenations_are_unknown(tmp_path, source):
    # Regression: the __main__ guard and concatenated strings evaluated literals libcst's way,
    # which raises SyntaxError for an unknown \N{...} name.
    (tmp_path / "escape.py").write_bytes(source)
    result = check_paths([tmp_path], settings=Settings(), now=NOW)
    assert result.internal_errors == ()
    assert "DG105" in {f.code for f in result.findings}


@pytest.mark.parametrize("with_dag", [True, False])
def test_a_reported_node_outside_the_file_goes_to_its_dag_never_to_a_wrong_place(tmp_path, monkeypatch, with_dag):
    # Issue 21: a node of another module's tree cannot be located in this file. A report that
    # names its DAG is put at the DAG; one that names nothing stays an internal error (a bug).
    import libcst

    from dagguard.rules import RULES_BY_CODE
    from dagguard.rules.base import Report

    rule = RULES_BY_CODE["DG105"]

    def foreign_node(file, context):
        for dag in file.dags:
            yield Report(node=libcst.parse_expression("elsewhere"), message="from another tree",
                         dag=dag if with_dag else None)

    monkeypatch.setattr(type(rule), "check", lambda self, file, context: foreign_node(file, context))
    (tmp_path / "d.py").write_bytes(GOOD_DAG)
    result = check_paths([tmp_path], settings=Settings(), now=NOW)
    moved = [f for f in result.findings if f.code == "DG105"]
    if with_dag:
        dag_line = next(i for i, line in enumerate(GOOD_DAG.decode().splitlines(), 1) if "DAG(" in line)
        assert [(f.line, f.message) for f in moved] == [(dag_line, "from another tree")]
        assert result.internal_errors == ()
    else:
        assert moved == [] and "could not locate the reported node" in result.internal_errors[0]
