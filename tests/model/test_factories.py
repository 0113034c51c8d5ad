"""DAG factories, wrapper classes and project modules, on the fixture repository
tests/fixtures/factory_repo (read statically: nothing in it is imported)."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dagguard.api import check_paths, check_source
from dagguard.config import ConfigError, load_file

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "factory_repo"
NOW = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="module")
def findings():
    cwd = os.getcwd()
    os.chdir(FIXTURE)
    try:
        result = check_paths(["."], now=NOW)
    finally:
        os.chdir(cwd)
    return result


def _at(result, path: str, code: str):
    return [f for f in result.findings if f.path == path and f.code == code]


def test_cross_module_factory_with_risky_defaults_is_a_dag(findings):
    [finding] = _at(findings, "dags/absolute.py", "DG101")
    assert finding.line == 6
    assert finding.message.startswith("DAG 'orders_hourly' (made by common.factory.create_dag) enables catchup")
    assert "~78,000 runs" in finding.message
    assert "default of common.factory.create_dag's parameter 'catchup' (lib/common/factory.py:10)" in finding.help


def test_caller_overriding_the_defaults_and_safe_defaults_are_clean(findings):
    lines = {f.line for f in findings.findings if f.path == "dags/absolute.py"}
    assert lines == {6}


def test_relative_import_reaches_the_factory(findings):
    [finding] = _at(findings, "dags/team/relative.py", "DG101")
    assert "(made by dags.team.factory.team_dag)" in finding.message


def test_kwargs_forwarded_reach_dag_and_point_at_the_callers_argument(findings):
    [finding] = _at(findings, "dags/forwarding.py", "DG106")
    assert (finding.line, finding.column) == (5, 35)
    assert "'forwarded' (made by common.factory.forwarding_dag)" in finding.message


def test_factory_calling_a_factory(findings):
    [finding] = _at(findings, "dags/layered.py", "DG101")
    assert "DAG 'sales_rollup' (made by common.factory.hourly_team_dag)" in finding.message


def test_wrapper_class(findings):
    [finding] = _at(findings, "dags/wrapper.py", "DG101")
    assert "DAG 'platform_hourly' (made by common.factory.PlatformDag)" in finding.message


def test_declared_factory_defaults_and_renamed_arguments(findings):
    [finding] = _at(findings, "dags/declared.py", "DG101")
    assert "(made by vendor_platform.VendorDag)" in finding.message
    assert "~1,800 runs" in finding.message     # schedule_interval="@daily" became schedule
    assert "vendor_platform.VendorDag's `defaults` entry 'catchup' declared in pyproject.toml" in finding.help
    assert not _at(findings, "dags/declared.py", "DG106")
    assert not _at(findings, "dags/declared.py", "DG102")


def test_value_from_the_environment_is_silent(findings):
    assert not [f for f in findings.findings if f.path == "dags/env.py"]


def test_missing_broken_and_cyclic_modules_are_unknown_not_errors(findings):
    assert not [f for f in findings.findings if f.path == "dags/unseen.py"]
    assert not findings.internal_errors
    # settings.py imports airflow for a timetable constant that DAG files import: their library,
    # not a file whose DAGs went unseen.
    assert findings.files_without_dags == ("dags/unseen.py",)


def test_airflow_extensions_and_imported_modules_are_not_counted_as_unseen(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "operators.py").write_text(
        "from airflow.models import BaseOperator\n\nclass Export(BaseOperator):\n    pass\n")
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "common.py").write_text(
        "import pendulum\nfrom airflow import DAG\n\nSTART = pendulum.datetime(2025, 1, 1)\n\n"
        "def make(dag_id):\n    return DAG(dag_id, schedule=None, start_date=START)\n")
    (tmp_path / "dags" / "helpers.py").write_text("from airflow.sdk import Variable\nBUCKET = 'b'\n")
    (tmp_path / "dags" / "uses.py").write_text("from helpers import BUCKET\nfrom common import make\n\ndag = make(BUCKET)\n")
    (tmp_path / "dags" / "hidden.py").write_text("import airflow\nfrom vendor import build\n\ndag = build('x')\n")
    result = check_paths([tmp_path], now=NOW)
    unseen = {Path(p).name for p in result.files_without_dags}
    assert unseen == {"hidden.py"}


def test_duplicate_dag_id_made_by_factories_in_two_files(findings):
    [finding] = _at(findings, "dags/dup_two.py", "DG302")
    assert "'billing_nightly' is already defined at dags/dup_one.py:4" in finding.message


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "dagguard", *args], cwd=FIXTURE, capture_output=True,
                          text=True, env=env, timeout=120)


def test_dags_command_golden_text():
    result = _cli("dags")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (FIXTURE.parent / "factory_repo.dags.txt").read_text()


def test_dags_command_golden_json():
    result = _cli("dags", "--format", "json")
    assert json.loads(result.stdout) == json.loads((FIXTURE.parent / "factory_repo.dags.json").read_text())


def test_check_summary_counts_files_without_a_visible_dag():
    result = _cli("check", "dags/unseen.py", "dags/absolute.py")
    assert "1 file imports airflow and looks like a DAG file but defines no DAG dagguard can see" in result.stdout
    assert "`dagguard dags --unseen` says why" in result.stdout
    assert "dag-factories" in result.stdout


def _lint(code: str) -> list:
    return check_source(textwrap.dedent(code), "dag.py", now=NOW)


IN_FILE = """\
    import pendulum
    from airflow import DAG

    def make(dag_id, schedule="@hourly", catchup=True):
        dag = DAG(dag_id, schedule=schedule, catchup=catchup, start_date=pendulum.datetime(2024, 1, 1),
                  max_active_runs=1, max_active_tasks=2)
        return dag

    orders = make("orders"){noqa}
    """


def test_in_file_factory_and_noqa_on_the_call():
    [finding] = [f for f in _lint(IN_FILE.format(noqa="")) if f.code == "DG101"]
    assert finding.line == 9 and "DAG 'orders' (made by make)" in finding.message
    assert not [f for f in _lint(IN_FILE.format(noqa="  # noqa: DG101")) if f.code == "DG101"]


def test_factory_own_dag_call_is_silent_for_parameter_values():
    assert [f.line for f in _lint(IN_FILE.format(noqa="")) if f.code == "DG101"] == [9]


def test_tasks_attach_to_a_factory_made_dag():
    code = """\
        from airflow import DAG
        from airflow.providers.standard.operators.empty import EmptyOperator

        def make(dag_id):
            with DAG(dag_id, schedule=None, max_active_runs=1, max_active_tasks=2) as dag:
                pass
            return dag

        with make("a") as dag:
            EmptyOperator(task_id="x")
            EmptyOperator(task_id="x")
        """
    assert [f.code for f in _lint(code)] == ["DG303"]


def test_caller_passing_a_safe_value_overrides_the_risky_default():
    code = IN_FILE.format(noqa="").replace('make("orders")', 'make("orders", catchup=False)')
    assert not [f for f in _lint(code) if f.code == "DG101"]


def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(textwrap.dedent(body))
    return path


@pytest.mark.parametrize("body, message", [
    ('[tool.dagguard.dag-factories."x.Y"]\nbogus = 1\n', "unknown key 'bogus'"),
    ('[tool.dagguard.dag-factories."x.Y"]\narguments = { a = 1 }\n', "arguments must be a table"),
    ('[tool.dagguard.dag-factories."nodots"]\n', "dotted import path"),
    ('[tool.dagguard]\nsrc = "lib"\n', "src must be a list of strings"),
])
def test_bad_factory_config_names_key_and_file(tmp_path, body, message):
    path = _config(tmp_path, body)
    with pytest.raises(ConfigError) as raised:
        load_file(path)
    assert message in str(raised.value) and str(path.resolve()) in str(raised.value)


def test_bad_factory_config_exits_2(tmp_path):
    _config(tmp_path, '[tool.dagguard.dag-factories."x.Y"]\nbogus = 1\n')
    (tmp_path / "d.py").write_text("x = 1\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-m", "dagguard", "check", "d.py"], cwd=tmp_path,
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2 and "bogus" in result.stderr and "Traceback" not in result.stderr


def test_module_constants_of_the_project_are_read_through_imports(findings):
    hourly, twice = _at(findings, "dags/constants.py", "DG101")
    assert "'constants_hourly'" in hourly.message and "~78,000 runs" in hourly.message
    # A timetable constant the evaluator gives no value: read by timetable_call_recurrence.
    assert "'constants_twice'" in twice.message and "~6,500 runs" in twice.message


def test_static_and_class_method_factories_and_annotated_binding():
    code = """\
        import pendulum
        from airflow import DAG
        from airflow.providers.standard.operators.empty import EmptyOperator

        class Helpers:
            @staticmethod
            def make(dag_id, catchup=True):
                return DAG(dag_id, schedule="@daily", catchup=catchup, start_date=pendulum.datetime(2024, 1, 1),
                           max_active_runs=1, max_active_tasks=2)

        a = Helpers.make("static_made")
        b: DAG = Helpers.make("annotated", catchup=False)
        EmptyOperator(task_id="x", dag=b)
        EmptyOperator(task_id="x", dag=b)
        """
    found = _lint(code)
    assert [(f.code, f.dag_id) for f in found] == [("DG101", "static_made"), ("DG303", "annotated")]
    assert "(made by Helpers.make)" in found[0].message


def test_a_result_records_the_modules_it_was_resolved_through(tmp_path):
    from dagguard.config import Settings
    from dagguard.engine import runner
    from dagguard.model.project.project import ProjectIndex

    project = ProjectIndex([FIXTURE, FIXTURE / "lib"])
    path = FIXTURE / "dags" / "layered.py"
    result = runner.check_file(path, Settings(), NOW, project)
    assert result.depends_on == {FIXTURE / "lib" / "common" / "factory.py"}
    plain = runner.check_file(FIXTURE / "dags" / "in_file.py", Settings(), NOW, project)
    assert plain.depends_on == frozenset()
    # The index follows each name once per run; a second caller still depends on the module.
    again = runner.check_file(path, Settings(), NOW, project)
    assert again.depends_on == result.depends_on


def test_only_files_without_a_module_level_dag_are_kept_for_later_imports(tmp_path):
    # Regression: a module-level DAG's scope is the module seen from its statement, never the
    # module scope itself, so every DAG file was kept as if it were a helper module.
    from dagguard.config import Settings
    from dagguard.engine import runner
    from dagguard.model.project.project import ProjectIndex

    (tmp_path / "helpers.py").write_text(
        "from airflow import DAG\n\ndef make(dag_id):\n    return DAG(dag_id, schedule=None)\n")
    (tmp_path / "direct.py").write_text("from airflow import DAG\n\ndag = DAG('direct', schedule=None)\n")
    (tmp_path / "made.py").write_text("from helpers import make\n\ndag = make('made')\n")
    project = ProjectIndex([tmp_path])
    for name in ("helpers.py", "direct.py", "made.py"):
        runner.check_file(tmp_path / name, Settings(), NOW, project)
    assert project.parsed(tmp_path / "helpers.py") is not None
    assert project.parsed(tmp_path / "direct.py") is None
    assert project.parsed(tmp_path / "made.py") is None


def test_each_module_is_parsed_at_most_once_per_run(monkeypatch):
    import collections

    import libcst

    parsed: collections.Counter = collections.Counter()
    real = libcst.parse_module

    def counting(source, *args, **kwargs):
        parsed[bytes(source) if isinstance(source, (bytes, bytearray)) else source.encode()] += 1
        return real(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", counting)
    cwd = os.getcwd()
    os.chdir(FIXTURE)
    try:
        check_paths(["."], now=NOW)
    finally:
        os.chdir(cwd)
    factory = (FIXTURE / "lib" / "common" / "factory.py").read_bytes()
    assert parsed[factory] == 1
    # A module that does not parse is tried again only to report its DG000; the two empty
    # __init__.py files have the same (empty) source.
    broken = (FIXTURE / "lib" / "common" / "broken.py").read_bytes()
    assert {source for source, count in parsed.items() if count > 1} <= {broken, b""}


def test_instance_method_factories():
    code = """\
        import pendulum
        from airflow import DAG

        class Shared:
            def __init__(self, team):
                self.team = team

            def create_dag(self, dag_id, catchup=True):
                return DAG(dag_id, schedule="@daily", catchup=catchup, start_date=pendulum.datetime(2024, 1, 1),
                           max_active_runs=1, max_active_tasks=2, tags=[self.team])

        shared = Shared("pdg")
        a = shared.create_dag("bound_instance")
        b = Shared("x").create_dag("made_in_place", catchup=False)
        """
    found = _lint(code)
    assert [(f.code, f.dag_id) for f in found] == [("DG101", "bound_instance")]
    assert "(made by Shared.create_dag)" in found[0].message


def test_a_dags_folder_below_the_checked_folder_is_a_module_root(tmp_path, monkeypatch):
    """`dagguard check .` from the repository: dags/uses.py's `from common import make` is
    dags/common.py, as Airflow's sys.path has it."""
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "common.py").write_text(
        "import pendulum\nfrom airflow import DAG\n\n"
        "def make(dag_id):\n    return DAG(dag_id, schedule='@hourly', start_date=pendulum.datetime(2018, 1, 1),"
        " catchup=True)\n")
    (tmp_path / "dags" / "uses.py").write_text("from common import make\n\ndag = make('hourly_export')\n")
    monkeypatch.chdir(tmp_path)
    result = check_paths(["."], now=NOW)
    [made] = [f for f in result.findings if f.path == "dags/uses.py" and f.code == "DG101"]
    assert "(made by common.make)" in made.message


def test_files_named_one_by_one_resolve_as_their_folder_does(tmp_path, monkeypatch):
    """pre-commit passes the changed files by name, CI checks the folder: with the project's
    pyproject.toml, the same modules are roots, so the same DAGs are seen. dags/team is not on Airflow's sys.path, so `from helpers
    import make` in dags/team/x.py does not reach dags/team/helpers.py (it would fail to import)."""
    (tmp_path / "pyproject.toml").write_text("[tool.dagguard]\n")
    (tmp_path / "dags" / "team").mkdir(parents=True)
    (tmp_path / "dags" / "team" / "helpers.py").write_text(
        "import pendulum\nfrom airflow import DAG\n\n"
        "def make(dag_id, catchup):\n"
        "    return DAG(dag_id, schedule='@hourly', start_date=pendulum.datetime(2018, 1, 1), catchup=catchup)\n")
    (tmp_path / "dags" / "team" / "x.py").write_text("from helpers import make\n\ndag = make('hourly', True)\n")
    monkeypatch.chdir(tmp_path)
    whole = check_paths(["."], now=NOW)
    named = check_paths(["dags/team/helpers.py", "dags/team/x.py"], now=NOW)
    assert [f.to_dict() for f in named.findings] == [f.to_dict() for f in whole.findings]
    assert named.dags == whole.dags
    assert not [d for d in whole.dags if d.path == "dags/team/x.py"]


@pytest.mark.parametrize("with_pyproject", [False, True])
def test_src_is_a_module_root_by_default_as_in_ruff(tmp_path, monkeypatch, with_pyproject):
    """ruff's default `src` is [".", "src"]: a wrapper class under src/acme/ is found from dags/
    without configuration, with or without a [tool.dagguard] table."""
    if with_pyproject:
        (tmp_path / "pyproject.toml").write_text("[tool.dagguard]\n")
    (tmp_path / "src" / "acme").mkdir(parents=True)
    (tmp_path / "src" / "acme" / "__init__.py").write_text("")
    (tmp_path / "src" / "acme" / "wrapper.py").write_text(
        "import pendulum\nfrom airflow import DAG\n\n"
        "class AcmeDag:\n    def __init__(self, dag_id):\n"
        "        self.dag = DAG(dag_id, schedule='@hourly', start_date=pendulum.datetime(2018, 1, 1), catchup=True)\n")
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "orders.py").write_text("from acme.wrapper import AcmeDag\n\nAcmeDag('orders_hourly')\n")
    monkeypatch.chdir(tmp_path)
    for paths in (["dags"], ["dags/orders.py"], ["."]):
        result = check_paths(paths, now=NOW)
        [made] = [f for f in result.findings if f.code == "DG101" and f.path == "dags/orders.py"]
        assert "(made by acme.wrapper.AcmeDag)" in made.message, paths


def test_configured_src_replaces_the_default(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.dagguard]\nsrc = ["lib"]\n')
    for folder in ("src", "lib"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"{folder}_factory.py").write_text(
            "import pendulum\nfrom airflow import DAG\n\n"
            "def make(dag_id):\n    return DAG(dag_id, schedule='@hourly', start_date=pendulum.datetime(2018, 1, 1),"
            " catchup=True)\n")
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "x.py").write_text(
        "from lib_factory import make\nfrom src_factory import make as other\n\nmake('from_lib')\nother('from_src')\n")
    monkeypatch.chdir(tmp_path)
    result = check_paths(["dags"], now=NOW)
    assert [f.dag_id for f in result.findings if f.code == "DG101"] == ["from_lib"]


def test_a_removed_argument_the_factory_writes_is_reported_in_the_factory_only(tmp_path):
    # Issue 21, F6: create_dag's own DAG(schedule_interval=..., concurrency=...) raises the
    # TypeError; its callers pass its parameters, or nothing, and need no change.
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "__init__.py").write_text("")
    (tmp_path / "common" / "factory.py").write_text(textwrap.dedent("""\
        import datetime
        from airflow.models import DAG


        def create_dag(dag_id, schedule_interval=None, concurrency=None, **kwargs):
            return DAG(dag_id=dag_id, schedule_interval=schedule_interval, concurrency=concurrency,
                       start_date=datetime.datetime(2023, 1, 1), catchup=False, max_active_runs=1, **kwargs)
    """))
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "etl.py").write_text(textwrap.dedent("""\
        from common.factory import create_dag

        etl = create_dag(dag_id="etl", schedule_interval="@daily")
        load = create_dag("load", "@hourly", concurrency=2)
        old = create_dag("old", sla_miss_callback=print)
    """))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = check_paths(["."], now=NOW)
    finally:
        os.chdir(cwd)
    found = sorted((f.path, f.line) for f in result.findings if f.code == "DG106")
    # The factory's two keywords; at the callers only what they forward through **kwargs.
    assert found == [("common/factory.py", 6), ("common/factory.py", 6), ("dags/etl.py", 5)]
    [forwarded] = [f for f in result.findings if f.code == "DG106" and f.path == "dags/etl.py"]
    assert "sla_miss_callback" in forwarded.message


def test_a_declared_factory_keeps_its_call_site_findings(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.dagguard.dag-factories."vendor.make"]
        arguments = { schedule_interval = "schedule" }
    """))
    (tmp_path / "dag.py").write_text(textwrap.dedent("""\
        from vendor import make

        nightly = make(dag_id="nightly", concurrency=4, schedule_interval="@daily")
    """))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = check_paths(["."], now=NOW)
    finally:
        os.chdir(cwd)
    assert ["concurrency" in f.message for f in result.findings if f.code == "DG106"] == [True]
