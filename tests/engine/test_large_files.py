"""Large files are checked in pieces (engine/large_files.py): same findings as checked whole,
linear time, bounded memory."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import astuple
from pathlib import Path

import pytest

from dagguard.config import Settings
from dagguard.engine import large_files, runner
from dagguard.engine.large_files import cut
from dagguard.rules import ALL_RULES
from dagguard.rules.pages import examples, page_text
from tests.lint_helpers import NOW

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_DAGS = sorted((REPO / "example_dags").glob("*.py"))
PAGE_EXAMPLES = [(f"{rule.code}-{e.kind}-{e.number}", e.code) for rule in ALL_RULES
                 for e in examples(page_text(rule.code) or "") if not e.options and not e.files]


@pytest.fixture
def tiny_pieces(monkeypatch):
    """Every file is "large" and every group of statements its own piece."""
    monkeypatch.setattr(runner, "LARGE_FILE_BYTES", 0)
    monkeypatch.setattr(large_files, "LARGE_FILE_BYTES", 0)
    monkeypatch.setattr(large_files, "PIECE_BYTES", 1)
    monkeypatch.setattr(large_files, "SLICE_BYTES", 1)


def _check(path: Path, source: bytes):
    result = runner.check_source(source, path, Settings(), NOW)
    # In the order reports are sorted in (pieces come in the order of their groups).
    return (sorted(astuple(f) for f in result.findings), result.dag_count, sorted(result.noqa.items()),
            sorted((s.dag_id, s.line, s.column) for s in result.dag_sites), sorted(result.flagged_dags),
            sorted(sorted(d.as_dict().items()) for d in result.dags), sorted(result.warnings))


def _same_in_pieces(monkeypatch, path: Path, source: bytes) -> None:
    whole = _check(path, source)
    monkeypatch.setattr(runner, "LARGE_FILE_BYTES", 0)
    monkeypatch.setattr(large_files, "LARGE_FILE_BYTES", 0)
    monkeypatch.setattr(large_files, "PIECE_BYTES", 1)
    monkeypatch.setattr(large_files, "SLICE_BYTES", 1)
    assert _check(path, source) == whole
    monkeypatch.undo()


@pytest.mark.parametrize("path", EXAMPLE_DAGS, ids=lambda p: p.name)
def test_example_dags_give_the_same_findings_in_pieces(monkeypatch, path):
    _same_in_pieces(monkeypatch, path, path.read_bytes())


@pytest.mark.parametrize(("name", "code"), PAGE_EXAMPLES, ids=[name for name, _ in PAGE_EXAMPLES])
def test_rule_page_examples_give_the_same_findings_in_pieces(monkeypatch, tmp_path, name, code):
    _same_in_pieces(monkeypatch, tmp_path / "example_dag.py", code.encode())


def _generated(count: int, *, shared_names: bool = False, newline: str = "\n") -> str:
    head = ("from datetime import datetime\nfrom airflow import DAG\n"
            "from airflow.providers.standard.operators.bash import BashOperator\n\n")
    blocks = []
    for i in range(count):
        dag, task = ("dag", "t") if shared_names else (f"dag_{i}", f"t_{i}")
        blocks.append(
            f'with DAG(dag_id="gen_{i}", schedule="@hourly", start_date=datetime(2025, 1, 1),  # noqa: DG103\n'
            f'         catchup=True) as {dag}:\n'
            f'    {task} = BashOperator(task_id="t", bash_command="echo {{{{ ds }}}}")\n\n')
    return (head + "".join(blocks)).replace("\n", newline)


@pytest.mark.parametrize("shared_names", [False, True], ids=["own-names", "names-rebound"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_generated_many_dag_file_is_cut_and_gives_the_same_findings(monkeypatch, tmp_path, shared_names, newline):
    source = _generated(40, shared_names=shared_names, newline=newline).encode()
    monkeypatch.setattr(large_files, "LARGE_FILE_BYTES", 0)
    monkeypatch.setattr(large_files, "PIECE_BYTES", 1)
    monkeypatch.setattr(large_files, "SLICE_BYTES", 200)
    pieces = cut(source)
    assert pieces is not None and len(pieces.pieces) == 40   # each DAG block stands alone
    monkeypatch.undo()
    whole = _check(tmp_path / "gen.py", source)
    assert {f[3] for f in whole[0]} == {"DG101", "DG102"}    # DG103 is noqa'd on each DAG's line
    _same_in_pieces(monkeypatch, tmp_path / "gen.py", source)


def test_statements_that_share_names_stay_in_one_piece(tiny_pieces):
    source = b"""\
from airflow import DAG
from airflow.providers.standard.operators.bash import BashOperator
import pendulum

default_args = {"retries": 2}
dag = DAG("a", schedule="@daily", start_date=pendulum.datetime(2025, 1, 1), default_args=default_args)
one = BashOperator(task_id="one", bash_command="date", dag=dag)
two = BashOperator(task_id="two", bash_command="date", dag=dag)
one >> two
other = DAG("b", schedule=None, start_date=pendulum.datetime(2025, 1, 1))

def callback():
    return dag.dag_id
"""
    pieces = cut(source)
    assert pieces is not None
    owned = [sorted({line for line in piece.lines if line > 3}) for piece in pieces.pieces]
    # DAG "b" shares no name with the rest; the callback reads `dag`, so it joins its group.
    assert owned == [[4, 5, 6, 7, 8, 9], [10], [11, 12, 13]] or owned == [[4, 5, 6, 7, 8, 9, 11, 12, 13], [10]]
    assert all(piece.lines[:3] == (1, 2, 3) for piece in pieces.pieces)   # the imports head each


@pytest.mark.parametrize("source", [
    b"x = 1\n" * 10 + b"def f(:\n    pass\n",                    # a syntax error: checked whole
    b"from airflow import DAG\nDAG = 1\nd = DAG('x')\n",          # an import's name rebound
    b"\xef\xbb\xbfx = 1\ny = 2\n",                                # a BOM
    b"# -*- coding: latin-1 -*-\nx = 'caf\xe9'\ny = 2\n",          # not UTF-8
    b"x = 1\nfrom __future__ import annotations\ny = 2\n",       # the future, too late
], ids=["syntax-error", "rebound-import", "bom", "latin-1", "late-future"])
def test_files_that_cannot_be_cut_are_checked_whole(tiny_pieces, source):
    assert cut(source) is None


def test_a_syntax_error_in_a_large_file_is_the_same_finding_as_checked_whole(monkeypatch, tmp_path):
    source = _generated(30).encode() + b"with DAG(dag_id='broken' as d:\n    pass\n" + _generated(3).encode()
    whole = _check(tmp_path / "gen.py", source)
    _same_in_pieces(monkeypatch, tmp_path / "gen.py", source)
    assert [f[3] for f in whole[0]] == ["DG000"]


def test_an_expression_too_deep_deep_in_a_large_file_is_one_finding_at_its_line(tiny_pieces, tmp_path):
    source = _generated(20).encode() + b"x = " + b"-" * 1500 + b"1\n"
    result = runner.check_source(source, tmp_path / "gen.py", Settings(), NOW)
    line = source.count(b"\n")
    assert [(f.code, f.line) for f in result.findings] == [("DG000", line)]


def test_a_string_with_lines_at_column_zero_is_not_cut(tiny_pieces, tmp_path):
    text = 'DOC = """\nwith DAG(dag_id="in_a_string") as d:\n    pass\n"""\n' + _generated(3)
    pieces = cut(text.encode())
    assert pieces is not None
    assert not any(b'"in_a_string"' in piece.source and b'DOC = """' not in piece.source
                   for piece in pieces.pieces)
    result = runner.check_source(text.encode(), tmp_path / "gen.py", Settings(), NOW)
    assert result.dag_count == 3


@pytest.mark.parametrize("count", [3000])
def test_a_large_generated_file_is_checked_in_bounded_memory(tmp_path, count):
    """A 540 KB file of 3,000 DAGs, in a process of its own: its peak memory stays near that
    of one 256 KB piece (about 150 MB of tree), not the 350 MB the whole tree takes."""
    path = tmp_path / "gen.py"
    path.write_text(_generated(count))
    assert path.stat().st_size > large_files.LARGE_FILE_BYTES
    script = (
        "import resource, sys, datetime as dt\n"
        "from pathlib import Path\n"
        "from dagguard.config import Settings\n"
        "from dagguard.engine.runner import check_source\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "p = Path(sys.argv[1])\n"
        "r = check_source(p.read_bytes(), p, Settings(), dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc))\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(r.dag_count, len(r.findings), (after - before) // 1024)\n")
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                         cwd=REPO, check=True).stdout.split()
    dags, findings, grown_mb = map(int, out)
    assert dags == count and findings == 2 * count    # DG101 and DG102; DG103 is noqa'd
    assert grown_mb < 230, f"checking grew the process by {grown_mb} MB"


def test_pieces_checked_in_two_processes_give_what_one_gives(tiny_pieces, tmp_path):
    """`dagguard check big.py`: the file's pieces go to a pool, and come back in order."""
    source = _generated(40, shared_names=True).encode()
    path = tmp_path / "gen.py"
    one = runner.check_source(source, path, Settings(), NOW, jobs=1)
    two = runner.check_source(source, path, Settings(), NOW, jobs=2)
    assert one == two
    assert len(one.findings) == 80 and one.dag_count == 40
