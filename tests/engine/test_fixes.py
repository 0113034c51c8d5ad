"""Fixes: lossless outside the replaced nodes, idempotent, compiled before they are kept,
written atomically and only when the text changed."""

from __future__ import annotations

import os
import sys

import libcst as cst
import pytest

from dagguard.api import check_source, fix_paths, fix_source
from dagguard.config import Settings
from dagguard.engine import fixes as engine_fixes
from dagguard.rules.base import SAFE, Fix
from tests.lint_helpers import NOW

# Comments, odd spacing, blank lines and single quotes everywhere, CRLF, a BOM.
MESSY = (
    "\ufeff# -*- coding: utf-8 -*-\r\n"
    "# top comment   with  spaces\r\n"
    "from airflow import DAG  # the class\r\n"
    "import pendulum\r\n"
    "\r\n"
    "\r\n"
    "with DAG(  # the dag\r\n"
    "    'legacy',\r\n"
    "    schedule_interval = '@daily' ,   # odd spacing\r\n"
    "\r\n"
    "    start_date=pendulum.datetime(2026,1,1),  # no spaces\r\n"
    "    catchup=True,\r\n"
    "    concurrency=  3,\r\n"
    "    sla_miss_callback=print,  # goes away\r\n"
    ") as dag:\r\n"
    "    x = {'a':1}   ;  y = 2  # keep me\r\n"
)


def _fixed(source: str, unsafe: bool = True, settings: Settings = Settings()):
    return fix_source(source.encode("utf-8"), "dag.py", unsafe_fixes=unsafe, settings=settings, now=NOW)


def test_messy_file_keeps_every_byte_outside_the_fixed_nodes():
    result = _fixed(MESSY)
    # Only the fixed nodes change: the two renames, catchup's value, the dropped callback (its
    # line and comment go with it), the added bound at the arguments' indent.
    expected = (MESSY.replace("schedule_interval = ", "schedule = ").replace("catchup=True", "catchup=False")
                .replace("concurrency=  3", "max_active_tasks=  3")
                .replace("    sla_miss_callback=print,  # goes away\r\n", "    max_active_runs=1,\r\n"))
    assert result.fixed.decode("utf-8") == expected
    assert result.fixed.startswith(b"\xef\xbb\xbf")
    assert sorted(a.code for a in result.applied) == ["DG101", "DG102", "DG106", "DG106", "DG106"]
    assert not any(f.fixable for f in result.result.findings)


def test_only_safe_fixes_without_unsafe_fixes():
    result = _fixed(MESSY, unsafe=False)
    text = result.fixed.decode("utf-8")
    assert "schedule = '@daily'" in text and "max_active_tasks=  3" in text
    assert "catchup=True" in text and "sla_miss_callback" in text and "max_active_runs" not in text
    assert {f.code for f in result.result.findings if f.fix_safety == "unsafe"} >= {"DG101", "DG102", "DG106"}


def test_fixing_twice_equals_fixing_once():
    once = _fixed(MESSY)
    twice = fix_source(once.fixed, "dag.py", unsafe_fixes=True, now=NOW)
    assert twice.fixed == once.fixed
    assert twice.applied == ()


def test_latin1_file_keeps_its_encoding():
    source = ("# -*- coding: latin-1 -*-\nfrom airflow import DAG\nDAG('caf\xe9', schedule_interval=None,"
              " max_active_runs=1, max_active_tasks=2)\n").encode("latin-1")
    result = fix_source(source, "dag.py", now=NOW)
    assert result.fixed == source.replace(b"schedule_interval", b"schedule")


def test_a_fix_whose_text_does_not_compile_is_dropped_and_reported(monkeypatch):
    # A rule bug stands in here: a fix that produces `schedule=(` cannot compile.
    from dagguard.engine import runner

    real = runner.check_source

    def broken(*args, **kwargs):
        result = real(*args, **kwargs)
        if not result.fixes:
            return result
        finding, fix = result.fixes[0]
        node = fix.replacements[0][0]
        broken_name = cst.Name("x")
        object.__setattr__(broken_name, "value", "schedule=(")   # past libcst's validation
        bad = Fix("break it", SAFE, ((node, broken_name),))
        return runner.FileResult(**{**result.__dict__, "fixes": ((finding, bad),) + result.fixes[1:]})

    monkeypatch.setattr(engine_fixes, "check_source", broken)
    source = "from airflow import DAG\nDAG('x', schedule_interval=None, concurrency=2, max_active_runs=1)\n"
    result = _fixed(source, unsafe=False)
    assert [d.description for d in result.dropped] == ["break it"]
    compile(result.fixed, "x", "exec")
    assert b"max_active_tasks=2" in result.fixed   # the other fix still applies


def test_files_are_rewritten_atomically_and_only_when_changed(tmp_path, monkeypatch):
    dirty = tmp_path / "dirty.py"
    clean = tmp_path / "clean.py"
    dirty.write_bytes(b"from airflow import DAG\nDAG('x', schedule_interval=None, max_active_runs=1, max_active_tasks=1)\n")
    clean.write_bytes(b"from airflow import DAG\nDAG('y', schedule=None, max_active_runs=1, max_active_tasks=1)\n")
    os.chmod(dirty, 0o640)
    clean_mtime = clean.stat().st_mtime_ns
    renames = []
    real_replace = os.replace
    monkeypatch.setattr(engine_fixes.os, "replace", lambda a, b: (renames.append((a, b)), real_replace(a, b)))
    run = fix_paths([tmp_path], settings=Settings(), now=NOW)
    assert run.applied == 1
    assert [os.path.basename(b) for _, b in map(lambda r: (r[0], str(r[1])), renames)] == ["dirty.py"]
    assert b"schedule=None" in dirty.read_bytes()
    assert oct(dirty.stat().st_mode & 0o777) == oct(0o640)
    assert clean.stat().st_mtime_ns == clean_mtime
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clean.py", "dirty.py"]  # no temp file left


def test_diff_mode_writes_nothing(tmp_path):
    dag = tmp_path / "d.py"
    original = b"from airflow import DAG\nDAG('x', schedule_interval=None, max_active_runs=1, max_active_tasks=1)\n"
    dag.write_bytes(original)
    run = fix_paths([dag], settings=Settings(), now=NOW, write=False)
    assert dag.read_bytes() == original
    diff = engine_fixes.unified_diff(run.files[0])
    assert "-DAG('x', schedule_interval=None" in diff and "+DAG('x', schedule=None" in diff


@pytest.mark.parametrize("call, expected", [
    ("DAG('x', schedule='@daily')", "DAG('x', schedule='@daily', max_active_runs=1)"),
    ("DAG('x', schedule = '@daily', tags = [])", "DAG('x', schedule = '@daily', tags = [], max_active_runs = 1)"),
    ("DAG(\n    'x',\n    schedule='@daily',\n)", "DAG(\n    'x',\n    schedule='@daily',\n    max_active_runs=1,\n)"),
    ("DAG(\n    'x',\n    schedule='@daily'  # why\n)",
     "DAG(\n    'x',\n    schedule='@daily',  # why\n    max_active_runs=1\n)"),
    ("DAG('x',\n    schedule='@daily')", "DAG('x',\n    schedule='@daily',\n    max_active_runs=1)"),
])
def test_added_arguments_follow_the_calls_style(call, expected):
    prefix = "from airflow import DAG\n"
    settings = Settings(select=("DG102",))
    assert _fixed(prefix + call + "\n", settings=settings).fixed.decode() == prefix + expected + "\n"


def test_fix_values_come_from_config():
    settings = Settings(select=("DG102", "DG103"), fix_max_active_runs=3, fix_max_active_tasks=8)
    text = _fixed("from airflow import DAG\nDAG('x', schedule='@daily')\n", settings=settings).fixed.decode()
    assert "max_active_runs=3" in text and "max_active_tasks=8" in text


def test_missing_schedule_on_airflow_2_gets_airflow_2s_daily_default_and_its_import():
    settings = Settings(select=("DG105",), airflow_version="2")
    source = "from airflow import DAG\n\nwith DAG('x'):\n    pass\n"
    fixed = _fixed(source, unsafe=False, settings=settings).fixed.decode()
    assert fixed == ("from airflow import DAG\nfrom datetime import timedelta\n\n"
                     "with DAG('x', schedule=timedelta(days=1)):\n    pass\n")


def test_removing_an_argument_keeps_the_layout_and_the_other_comments():
    source = ("from airflow.sdk import DAG\n\nwith DAG(\n    'x',  # the id\n    schedule=None,\n"
              "    sla_miss_callback=print,  # gone\n    tags=['a'],\n):\n    pass\n")
    fixed = _fixed(source, settings=Settings(select=("DG106",))).fixed.decode()
    assert fixed == ("from airflow.sdk import DAG\n\nwith DAG(\n    'x',  # the id\n    schedule=None,\n"
                     "    tags=['a'],\n):\n    pass\n")


def test_data_interval_timetable_takes_the_start_dates_timezone_and_its_import():
    source = ("import pendulum\nfrom airflow.sdk import DAG\nfrom airflow.providers.common.sql.operators.sql import "
              "SQLExecuteQueryOperator\n\nwith DAG('d', schedule='0 6 * * *', start_date=pendulum.datetime(2026, 1, 1, "
              "tz='Europe/Amsterdam')):\n    SQLExecuteQueryOperator(task_id='t', conn_id='c', sql=\"SELECT 1 FROM t "
              "WHERE ts >= '{{ data_interval_start }}' AND ts < '{{ data_interval_end }}'\")\n")
    fixed = _fixed(source, settings=Settings(select=("DG206",))).fixed.decode()
    assert "from airflow.sdk import CronDataIntervalTimetable, DAG\n" in fixed
    assert "schedule=CronDataIntervalTimetable('0 6 * * *', timezone='Europe/Amsterdam')" in fixed


def test_a_file_this_python_cannot_compile_is_left_alone_and_says_why(monkeypatch):
    monkeypatch.setattr(engine_fixes, "_compiles", lambda source: False)
    source = "from airflow import DAG\nDAG('x', schedule_interval=None, max_active_runs=1, max_active_tasks=1)\n"
    result = _fixed(source, unsafe=False)
    assert result.fixed == source.encode() and result.applied == ()
    assert [d.reason for d in result.dropped] == ["the file does not compile on this Python as it is"]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="needs syntax libcst reads and this Python cannot compile")
def test_findings_in_a_file_this_python_cannot_compile_are_not_marked_fixable():
    # A 3.12 f-string on 3.11 (seen in the corpus): --fix cannot verify a fix, so check must
    # not promise one either; the fix run still says why it left the file alone.
    source = ("from airflow import DAG\nrow = {'a': 1}\nprint(f\"{row[\"a\"]}\")\n"
              "DAG('x', schedule_interval=None, max_active_runs=1, max_active_tasks=1)\n")
    (finding,) = check_source(source, "dag.py", now=NOW)
    assert (finding.code, finding.fixable, finding.fix_safety) == ("DG106", False, None)
    result = _fixed(source)
    assert result.fixed == source.encode() and not result.result.findings[0].fixable
    assert [d.reason for d in result.dropped] == ["the file does not compile on this Python as it is"]


FIXABLE_DAG = ('with DAG("x", schedule="@daily", start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), '
               'catchup=True):\n    pass\n')


def test_a_fix_keeps_the_large_constants_a_check_blanks_out():
    # Regression: the check hands libcst the file with constant containers of 1,000+ elements
    # blanked to `(...)`, and --fix wrote that tree back: the data was gone.
    data = "DATA = [" + ", ".join(str(i) for i in range(1500)) + "]\n"
    source = f"from airflow.sdk import DAG\nimport pendulum\n\n{data}\n{FIXABLE_DAG}"
    result = _fixed(source)
    assert result.applied and data in result.fixed.decode("utf-8")
    assert result.fixed.decode("utf-8").replace("catchup=False", "catchup=True").startswith(source.split("with")[0])


def test_a_file_libcst_cannot_write_back_unchanged_gets_no_fix():
    # libcst drops a form feed before the first statement: any fix would drop it too.
    source = f"\x0cfrom airflow.sdk import DAG\nimport pendulum\n\n{FIXABLE_DAG}"
    assert cst.parse_module(source).code != source   # the libcst behaviour this guards against
    result = _fixed(source)
    assert result.fixed == source.encode("utf-8") and result.applied == ()
    assert result.dropped and all("cannot write this file back unchanged" in d.reason for d in result.dropped)
