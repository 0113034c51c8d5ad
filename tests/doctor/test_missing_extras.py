"""After a plain `pip install dagguard` (no extras), doctor names the extra to install.

A fresh virtualenv with `pip install -e .` took 22 s here and needs the package index, too slow
and fragile for the suite; so doctor runs in a subprocess whose import system cannot find the
modules an extra installs, as if they were not installed (importlib.util.find_spec says None,
`import` raises ModuleNotFoundError). The fresh-venv run was checked by hand and gives the same.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.doctor.test_bad_input import assert_clean_error
from tests.doctor.support import DoctorRun

HIDE_MODULES = """
import sys
from importlib.machinery import PathFinder

HIDDEN = set(sys.argv.pop(1).split(","))

class WithoutExtras(PathFinder):
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            return None
        return super().find_spec(name, path, target)

sys.meta_path[:] = [WithoutExtras if finder is PathFinder else finder for finder in sys.meta_path]
import runpy
sys.argv[0] = "dagguard"
runpy.run_module("dagguard", run_name="__main__", alter_sys=True)
"""


def run_doctor_without(hidden: tuple[str, ...], *args: str) -> DoctorRun:
    env = {key: value for key, value in os.environ.items() if not key.startswith("AIRFLOW")}
    result = subprocess.run([sys.executable, "-c", HIDE_MODULES, ",".join(hidden), "doctor", *args],
                            env=env, capture_output=True, text=True, timeout=120)
    return DoctorRun(result.returncode, result.stdout, result.stderr)


def test_without_sqlalchemy_doctor_names_the_doctor_extra(tmp_path):
    result = run_doctor_without(("sqlalchemy",), "--db", f"sqlite:///{tmp_path / 'airflow.db'}")
    assert_clean_error(result, "dagguard doctor needs the sqlalchemy package", "pip install 'dagguard[doctor]'")


@pytest.mark.parametrize("url", [
    "postgresql://airflow@127.0.0.1:1/airflow",
    "postgresql+psycopg://airflow@127.0.0.1:1/airflow",
    "postgresql+psycopg2://airflow@127.0.0.1:1/airflow",
    "postgres://airflow@127.0.0.1:1/airflow",
])
def test_without_a_postgres_driver_doctor_names_the_postgres_extra(url: str):
    result = run_doctor_without(("psycopg", "psycopg2"), "--db", url)
    assert_clean_error(result, "driver", "is not installed", "pip install 'dagguard[postgres]'")


def test_the_hiding_is_real():
    # The wrapper itself must not break doctor: with nothing hidden, a missing file is the error.
    result = run_doctor_without(("nothing",), "--db", "sqlite:////nonexistent/airflow.db")
    assert_clean_error(result, "does not exist")
