"""Errors a user can cause: the CLI prints the message on one line and exits 2."""

from __future__ import annotations


class DoctorError(Exception):
    """Doctor cannot diagnose this database; the message says why and what to do."""


class ConnectError(DoctorError):
    """The metadata database cannot be found or opened."""


class NotAirflowError(DoctorError):
    """The database opens, but it is not an Airflow metadata database."""


class UnsupportedSchemaError(DoctorError):
    """An Airflow metadata database whose schema version doctor does not support."""
