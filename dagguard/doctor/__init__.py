"""dagguard doctor: diagnose (and repair) an Airflow 3.0-3.3 metadata database.

Runs with SQLAlchemy alone; never imported by the linter.
"""

from __future__ import annotations

from dagguard.extras import require_module

# Before anything imports SQLAlchemy: `pip install dagguard` alone does not install it.
require_module("sqlalchemy", extra="doctor", needed_by="dagguard doctor")

from dagguard.doctor.checks import CHECK_NAMES, CHECKS
from dagguard.doctor.diagnose import diagnose
from dagguard.doctor.errors import ConnectError, DoctorError, NotAirflowError, UnsupportedSchemaError
from dagguard.doctor.model import Diagnosis, DoctorOptions, Finding, RunRow
from dagguard.doctor.options import build_options, parse_since
from dagguard.doctor.repair import REPAIRS, RepairResult, repair
from dagguard.doctor.report import FORMATS, render, render_repair

__all__ = [
    "CHECKS", "CHECK_NAMES", "ConnectError", "Diagnosis", "DoctorError", "DoctorOptions", "FORMATS",
    "Finding", "NotAirflowError", "REPAIRS", "RepairResult", "RunRow", "UnsupportedSchemaError",
    "build_options", "diagnose", "parse_since", "render", "render_repair", "repair",
]
