"""noqa comments, select/ignore prefixes, per-file-ignores and exclude."""

from __future__ import annotations

from dagguard.engine.noqa import parse_noqa
from tests.lint_helpers import codes, lint

INCIDENT = """
import pendulum
from airflow.sdk import DAG

with DAG(  {dag_noqa}
    dag_id="orders_hourly",
    schedule="@hourly",
    start_date=pendulum.datetime(2025, 10, 1, tz="UTC"),
    catchup=True,  {line_noqa}
):
    pass
"""


def incident(dag_noqa: str = "", line_noqa: str = "") -> str:
    return INCIDENT.format(dag_noqa=dag_noqa, line_noqa=line_noqa)


def test_without_noqa_all_three_fire(tmp_path):
    assert sorted(codes(lint(tmp_path, incident()))) == ["DG101", "DG102", "DG103"]


def test_noqa_on_the_finding_line_silences_that_code_only(tmp_path):
    assert "DG101" not in codes(lint(tmp_path, incident(line_noqa="# noqa: DG101")))
    assert "DG101" in codes(lint(tmp_path, incident(line_noqa="# noqa: DG102")))


def test_noqa_on_the_dag_first_line_silences_dag_findings(tmp_path):
    found = codes(lint(tmp_path, incident(dag_noqa="# noqa: DG101, DG103")))
    assert sorted(found) == ["DG102"]


def test_bare_noqa_silences_everything_on_its_line(tmp_path):
    assert codes(lint(tmp_path, incident(dag_noqa="# noqa"))) == []


def test_unknown_code_in_noqa_is_ignored(tmp_path):
    assert sorted(codes(lint(tmp_path, incident(dag_noqa="# noqa: XYZ999")))) == ["DG101", "DG102", "DG103"]


def test_parse_noqa_forms():
    parsed = parse_noqa("a  # noqa\nb  # noqa:DG101,DG102\nc  # NOQA: dg103 DG104\nd # nothing\n")
    assert parsed == {1: None, 2: frozenset({"DG101", "DG102"}), 3: frozenset({"DG103", "DG104"})}


def test_select_and_ignore_prefixes(tmp_path):
    assert sorted(codes(lint(tmp_path, incident(), select=("DG10",), ignore=("DG103",)))) == ["DG101", "DG102"]
    assert codes(lint(tmp_path, incident(), select=("DG3",))) == []
    # The more specific prefix wins.
    assert sorted(codes(lint(tmp_path, incident(), select=("DG101",), ignore=("DG1",)))) == ["DG101"]


def test_per_file_ignores_by_glob(tmp_path):
    found = lint(tmp_path, incident(), name="legacy/old_dag.py", per_file_ignores=(("legacy/*", ("DG10",)),))
    assert found == []
    found = lint(tmp_path, incident(), name="new/dag.py", per_file_ignores=(("legacy/*", ("DG10",)),))
    assert len(found) == 3


def test_exclude_skips_files_and_folders(tmp_path):
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "x.py").write_text("with DAG(")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "y.py").write_text("with DAG(")
    found = lint(tmp_path, incident(), name="dag.py", exclude=("vendor",))
    assert {f.path.rsplit("/", 1)[-1] for f in found} == {"dag.py"}


def test_layers_resolve_as_ruff_resolves_them():
    from dagguard.config import RuleSelection as Layer
    from dagguard.engine.selection import resolve_rules

    codes = ("DG000", "DG101", "DG102", "DG103", "DG301", "DG302")
    assert resolve_rules([Layer(select=("ALL",), ignore=("DG1",))], codes) == {"DG000", "DG301", "DG302"}
    # Within a layer the more specific selector wins; a tie goes to ignore.
    assert resolve_rules([Layer(select=("DG101",), ignore=("DG1",))], codes) == {"DG101"}
    assert resolve_rules([Layer(select=("DG1",), ignore=("DG1",))], codes) == set()
    # A later layer without select edits the earlier one; a later select starts over.
    config = Layer(select=("DG",), ignore=("DG102",))
    assert resolve_rules([config, Layer(extend_select=("DG102",))], codes) == set(codes)
    assert resolve_rules([config, Layer(ignore=("DG3",))], codes) == {"DG000", "DG101", "DG103"}
    assert resolve_rules([config, Layer(select=("DG10",))], codes) == {"DG101", "DG102", "DG103"}


def test_extend_select_and_extend_ignore_settings(tmp_path):
    found = codes(lint(tmp_path, incident(), select=("DG101",), extend_select=("DG103",)))
    assert sorted(found) == ["DG101", "DG103"]
    assert sorted(codes(lint(tmp_path, incident(), extend_ignore=("DG102",)))) == ["DG101", "DG103"]


def test_all_in_per_file_ignores_silences_every_rule_there(tmp_path):
    assert lint(tmp_path, incident(), name="legacy/old.py", per_file_ignores=(("legacy/*", ("ALL",)),)) == []
