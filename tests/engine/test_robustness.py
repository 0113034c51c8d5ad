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
