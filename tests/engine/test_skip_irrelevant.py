"""Files that cannot define or reach a DAG are not parsed by libcst; everything else still is."""

from __future__ import annotations

from pathlib import Path

import libcst
import pytest

from dagguard.api import check_paths
from dagguard.config import Settings
from tests.lint_helpers import NOW

SKIPPED = {
    "helpers.py": "import os\nfrom collections import Counter\n\ndef count(xs):\n    return Counter(xs)\n",
    "empty.py": "",
    "constants.py": "RETRIES = 3\nOWNER = 'data-platform'\n",
}
PARSED = {
    "names_airflow.py": "import os\n# used by the Airflow deployment\nX = 1\n",
    "names_dag.py": "def make_dag(x):\n    return x\n",
    "upper_dag.py": "from lib import DAG\n",
    # A project module could be a factory whose name hides the DAG.
    "imports_project.py": "from common.factory import create_pipeline\n\npipeline = create_pipeline('sales')\n",
    "relative_import.py": "from .factory import build\n\nbuild('x')\n",
    "third_party.py": "import pandas\n",
    "local_import.py": "def f():\n    from company.pipelines import build\n    return build('x')\n",
}
BROKEN = {"syntax.py": "def f(:\n    pass\n", "nul.py": "x = 1\x00\n"}


@pytest.fixture
def parsed_sources(monkeypatch) -> list[str]:
    """The sources libcst is given during the test."""
    seen: list[str] = []
    real = libcst.parse_module

    def spy(source, *args, **kwargs):
        seen.append(source if isinstance(source, str) else source.decode("utf-8", "replace"))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", spy)
    return seen


def _check(tmp_path: Path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return check_paths([tmp_path], settings=Settings(), now=NOW)


@pytest.mark.parametrize("name", sorted(SKIPPED))
def test_file_that_cannot_reach_a_dag_is_not_parsed(tmp_path, parsed_sources, name):
    result = _check(tmp_path, {name: SKIPPED[name]})
    assert parsed_sources == []
    assert result.findings == () and result.files_checked == 1


@pytest.mark.parametrize("name", sorted(PARSED))
def test_file_that_may_reach_a_dag_is_parsed(tmp_path, parsed_sources, name):
    _check(tmp_path, {name: PARSED[name]})
    assert parsed_sources == [PARSED[name]]


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_invalid_file_without_dag_text_still_reports_dg000(tmp_path, name):
    result = _check(tmp_path, {name: BROKEN[name]})
    assert [f.code for f in result.findings] == ["DG000"]


def test_dag_files_beside_skipped_ones_keep_their_findings_and_duplicates(tmp_path):
    dag = "from airflow.sdk import DAG\nwith DAG('same', schedule=None):\n    pass\n"
    result = _check(tmp_path, {"a.py": dag, "b.py": dag, **SKIPPED})
    assert {f.code for f in result.findings} >= {"DG302"}
    assert result.files_checked == 2 + len(SKIPPED) and result.dag_count == 2
