"""airflow-version from the project's own Airflow pin when the config does not set it: an Airflow 2
project (catchup on by default) checked as Airflow 3 would miss the README's flood."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagguard.api import check_paths
from dagguard.config import describe, discover_settings
from tests.test_cli import dagguard

# The README's incident with catchup left to its default: a flood on Airflow 2 only.
DEFAULT_CATCHUP = """\
import pendulum
from airflow.sdk import DAG

with DAG(dag_id="orders_hourly", schedule="@hourly", start_date=pendulum.datetime(2025, 10, 1, tz="UTC"),
         max_active_runs=1, max_active_tasks=4):
    pass
"""


def _project(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True)        # the project's root: the search stops here
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "dags").mkdir(exist_ok=True)
    return root / "dags"


@pytest.mark.parametrize("name, text, major", [
    ("requirements.txt", "pandas==2.2\napache-airflow==2.9.3\n", "2"),
    ("requirements.txt", "apache-airflow[celery,postgres]==2.7.1  # pinned\n", "2"),
    ("requirements.txt", "apache_airflow >=2.7, <3.0 ; python_version >= '3.9'\n", "2"),
    ("requirements.txt", "apache-airflow~=2.10\n", "2"),
    ("requirements.txt", "apache-airflow>=3.0.2\n", "3"),
    ("requirements-dev.txt", "apache-airflow-core==3.1.0\n", "3"),
    ("constraints.txt", "apache-airflow==3.0.6\n", "3"),
    ("Dockerfile", "FROM apache/airflow:2.9.2-python3.11\nRUN pip install x\n", "2"),
    ("docker-compose.yaml", "x-airflow-common:\n  image: ${AIRFLOW_IMAGE_NAME:-apache/airflow:3.1.3}\n", "3"),
    ("Dockerfile", "FROM quay.io/astronomer/astro-runtime:11.18.0\n", "2"),         # Astro Runtime 11: Airflow 2.9
    ("Dockerfile", "FROM quay.io/astronomer/astro-runtime:3.1-11-python-3.12\n", "3"),  # Runtime 3.1-11: Airflow 3.1
    ("Dockerfile", "FROM quay.io/astronomer/ap-airflow:2.3.0-onbuild\n", "2"),
    ("pyproject.toml", '[project]\nname = "p"\ndependencies = ["apache-airflow>=2.8,<3"]\n', "2"),
    ("pyproject.toml", '[project]\nname = "p"\n[project.optional-dependencies]\nrun = ["apache-airflow==3.1.*"]\n', "3"),
    ("pyproject.toml", '[tool.poetry.dependencies]\npython = "^3.11"\napache-airflow = "^2.9"\n', "2"),
    ("pyproject.toml", '[tool.poetry.dependencies]\napache-airflow = { version = "~3.0.1", extras = ["celery"] }\n', "3"),
    ("pyproject.toml", '[tool.poetry.group.dev.dependencies]\napache-airflow = "2.10.5"\n', "2"),
])
def test_the_projects_pin_sets_the_airflow_version(tmp_path, name, text, major):
    dags = _project(tmp_path, {name: text})
    settings = discover_settings([dags])
    assert settings.airflow_version == major
    assert settings.airflow_version_from is not None and settings.airflow_version_from.startswith(name)


@pytest.mark.parametrize("files", [
    {"requirements.txt": "apache-airflow-providers-google==10.1\nairflow-code-editor==7\n"},  # not Airflow itself
    {"requirements.txt": "apache-airflow>=2.7\n"},                 # allows both
    {"requirements.txt": "apache-airflow\n"},                      # pins nothing
    {"Dockerfile": "FROM apache/airflow:latest\n"},
    {"requirements.txt": "apache-airflow==2.9.3\n", "Dockerfile": "FROM apache/airflow:3.0.0\n"},  # disagree
    {"requirements.txt": "apache-airflow @ https://example.com/apache_airflow-2.9.3-py3-none-any.whl\n"},
])
def test_no_settled_pin_keeps_the_default(tmp_path, files):
    settings = discover_settings([_project(tmp_path, files)])
    assert settings.airflow_version == "3" and settings.airflow_version_from is None


def test_a_dockerfiles_pin_is_its_image_whatever_the_files_name(tmp_path):
    # A continuation line of `RUN pip install` is not read as a requirement, in `Dockerfile` and
    # `prod.Dockerfile` alike: the image says which Airflow runs.
    install = "RUN pip install \\\n    apache-airflow==2.9.3\n"
    for name in ("Dockerfile", "prod.Dockerfile"):
        dags = _project(tmp_path / name, {name: "FROM apache/airflow:3.1.0\n" + install})
        assert discover_settings([dags]).airflow_version_from == f"{name} (apache/airflow:3.1.0)"


def test_an_unpinned_requirement_beside_a_pinned_image_does_not_veto_it(tmp_path):
    dags = _project(tmp_path, {"Dockerfile": "FROM apache/airflow:2.5.1-python3.9 as builder\n",
                               "requirements.txt": "apache-airflow[sentry]\napache-airflow-providers-http\n"})
    settings = discover_settings([dags])
    assert (settings.airflow_version, settings.airflow_version_from) == (
        "2", "Dockerfile (apache/airflow:2.5.1-python3.9)")


def test_the_nearest_folder_naming_airflow_decides_up_to_the_projects_root(tmp_path):
    (tmp_path / "requirements.txt").write_text("apache-airflow==2.9.3\n")        # above the project: not read
    project = tmp_path / "repo"
    dags = _project(project, {"requirements.txt": "apache-airflow==3.1.0\n",
                              "team/requirements.txt": "apache-airflow==2.10.0\n"})
    (project / "team" / "dags").mkdir()
    assert discover_settings([dags]).airflow_version == "3"
    assert discover_settings([project / "team" / "dags"]).airflow_version == "2"
    (project / "requirements.txt").unlink()
    assert discover_settings([dags]).airflow_version_from is None   # stopped at the root (.git)


def test_a_configured_airflow_version_wins_over_the_pin(tmp_path):
    dags = _project(tmp_path, {"requirements.txt": "apache-airflow==2.9.3\n",
                               "pyproject.toml": '[tool.dagguard]\nairflow-version = "3"\n'})
    assert discover_settings([dags]).airflow_version == "3"
    (tmp_path / "pyproject.toml").write_text("[tool.dagguard]\nmax-catchup-runs = 50\n")
    assert discover_settings([dags]).airflow_version == "2"
    assert discover_settings([dags], overrides={"airflow-version": "3"}).airflow_version == "3"


def test_show_settings_names_the_pin(tmp_path):
    dags = _project(tmp_path, {"requirements.txt": "apache-airflow==2.9.3\n"})
    shown = describe(discover_settings([dags]), ["DG101"])
    assert 'airflow-version = "2"   # the project\'s pin: requirements.txt (apache-airflow==2.9.3)' in shown
    result = dagguard("check", "dags", "--show-settings", cwd=tmp_path)
    assert result.returncode == 0 and "the project's pin: requirements.txt" in result.stdout


def test_an_airflow_2_project_gets_the_default_catchup_flood_reported(tmp_path):
    dags = _project(tmp_path, {"requirements.txt": "apache-airflow==2.9.3\n"})
    (dags / "orders.py").write_text(DEFAULT_CATCHUP)
    assert "DG101" in {f.code for f in check_paths([dags]).findings}
    (tmp_path / "requirements.txt").write_text("apache-airflow==3.1.0\n")
    assert "DG101" not in {f.code for f in check_paths([dags]).findings}   # catchup is off by default in 3


@pytest.mark.parametrize("spec", [
    ">=2.7,<3", ">=2.7, <3.0", ">=3.0,<4", ">=3", ">3.0.2", "<3", "<3.1", "<=2.10.5", "<=3", "~=2.9", "~=3.1.2",
    ">=2.7", "<2.5", ">=3.1,<3.0", ">=2.0,<=3.0", "> 2.9 , < 3.0.0", ">=2.7,<3.0.1", "~=3",
    "!=2.9.0,>=2.7", ">=2.7,!=3.*", "==3.*", ">=2.7;", "@ https://x",
])
def test_a_pins_major_is_what_packaging_says(spec):
    # The bounds read without packaging (a warm run must not pay its import) agree with it.
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from dagguard.airflow_pin import MAJORS, _major_of_specifier

    try:
        allowed = SpecifierSet(spec)
        majors = {m for m in MAJORS if any(allowed.contains(f"{m}.{minor}", prereleases=True)
                                            for minor in ("0", "0.1", "1.5", "5", "9.5", "10.5", "99"))}
        expected = majors.pop() if len(majors) == 1 else None
    except InvalidSpecifier:
        expected = None
    assert _major_of_specifier(spec) == expected


def test_plain_bounds_are_read_without_loading_packaging():
    import subprocess
    import sys

    code = ("import sys; from dagguard.airflow_pin import _major_of_specifier as m; "
            "assert m('>=2.7,<3') == '2' and m('~=3.1') == '3' and m('>=3.0,<4') == '3'; "
            "print('packaging.specifiers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
