"""A repository imported under another package name (issue 21, item 13): `workflows/` at the
root, imported as `acme_pipelines.workflows.common`, found through `[tool.dagguard] packages`
or the pyproject.toml's build configuration."""

from __future__ import annotations

import datetime as dt
import textwrap
from pathlib import Path

import pytest

from dagguard.api import check_paths
from dagguard.config import discover_settings
from dagguard.model.project.package_dirs import normalised_name, package_layout

NOW = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)
FACTORY = """\
import pendulum
from airflow.sdk import DAG


def make_dag(dag_id):
    return DAG(dag_id, schedule="@hourly", catchup=True, start_date=pendulum.datetime(2020, 1, 1))
"""
ORDERS = """\
from acme_pipelines.workflows.common import make_dag

dag = make_dag("orders_hourly")
"""


def _project(root: Path, pyproject: str) -> Path:
    (root / "workflows").mkdir()
    (root / "workflows" / "__init__.py").write_text("")
    (root / "workflows" / "common.py").write_text(FACTORY)
    (root / "workflows" / "orders.py").write_text(ORDERS)
    (root / "pyproject.toml").write_text(textwrap.dedent(pyproject))
    return root


def _check(root: Path):
    settings = discover_settings([root])
    return check_paths([root / "workflows" / "orders.py"], settings=settings, now=NOW)


def _dg101(result) -> list[str]:
    return [f.message for f in result.findings if f.code == "DG101"]


def test_the_packages_mapping_finds_the_factory_and_its_dag(tmp_path):
    root = _project(tmp_path, """\
        [tool.dagguard]
        packages = { "acme_pipelines" = "." }
    """)
    result = _check(root)
    [message] = _dg101(result)
    assert "DAG 'orders_hourly' (made by " in message and "common.make_dag)" in message
    assert [d.dag_id for d in result.dags] == ["orders_hourly"]
    assert result.files_without_dags == ()


def test_without_the_mapping_the_dag_is_not_seen(tmp_path):
    root = _project(tmp_path, """\
        [tool.dagguard]
        select = ["DG"]
    """)
    result = _check(root)
    assert _dg101(result) == [] and result.dags == ()


@pytest.mark.parametrize("build", [
    '[project]\nname = "Acme-Pipelines"\n',
    '[project]\nname = "acme-pipelines"\n[tool.hatch.build.targets.wheel.sources]\n"" = "acme_pipelines"\n',
    '[project]\nname = "other"\n[tool.setuptools.package-dir]\nacme_pipelines = "."\n',
], ids=["project_name", "hatch_sources", "setuptools_package_dir"])
def test_the_package_name_is_detected_from_the_build_configuration(tmp_path, build):
    root = _project(tmp_path, build)
    result = _check(root)
    [message] = _dg101(result)
    assert "DAG 'orders_hourly' (made by " in message


def test_a_project_name_with_a_folder_of_that_name_maps_nothing(tmp_path):
    (tmp_path / "acme_pipelines").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "acme-pipelines"\n')
    assert package_layout(tmp_path, None).packages == ()


def test_build_configuration_roots_and_packages(tmp_path):
    (tmp_path / "src" / "acme").mkdir(parents=True)
    (tmp_path / "code").mkdir()
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [project]
        name = "acme"
        [tool.setuptools.package-dir]
        "" = "src"
        [tool.hatch.build.targets.wheel]
        packages = ["code"]
    """))
    layout = package_layout(tmp_path, tmp_path / "pyproject.toml")
    assert layout.roots == ((tmp_path / "src").resolve(),)
    assert layout.packages == (("code", (tmp_path / "code").resolve()),)


def test_normalised_names():
    assert normalised_name("Acme-Pipelines") == "acme_pipelines"
    assert normalised_name("acme.pipelines__x") == "acme_pipelines_x"


def test_a_packages_override_alone_is_relative_to_the_working_folder(tmp_path, monkeypatch):
    root = _project(tmp_path, '[project]\nname = "other"\n')
    monkeypatch.chdir(root)
    settings = discover_settings([Path("workflows")], overrides={"packages": {"acme_pipelines": "."}})
    result = check_paths([Path("workflows/orders.py")], settings=settings, now=NOW)
    [message] = _dg101(result)
    assert "DAG 'orders_hourly' (made by " in message
