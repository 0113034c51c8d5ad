"""Turn the user's strings (deploy time, check names) into DoctorOptions, or a DoctorError."""

from __future__ import annotations

import datetime
from typing import Iterable

from dagguard.doctor.checks import CHECK_NAMES
from dagguard.doctor.errors import DoctorError
from dagguard.doctor.model import UTC, DoctorOptions

# No run is queued for longer; the bound keeps "now - queued age" a representable time.
MAX_QUEUED_AGE_MINUTES = 100 * 365 * 24 * 60


def parse_since(text: str) -> datetime.datetime:
    """Parse an ISO 8601 time such as 2026-11-30T14:00Z; a time without zone is UTC."""
    cleaned = text.strip()
    # Python 3.10's fromisoformat does not read a trailing Z.
    if cleaned.endswith(("Z", "z")):
        cleaned = cleaned[:-1] + "+00:00"
    try:
        value = datetime.datetime.fromisoformat(cleaned)
    except ValueError:
        raise DoctorError(
            f"--since {text!r} is not an ISO 8601 time; use e.g. 2026-11-30T14:00Z"
        ) from None
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:
        raise DoctorError(f"--since {text!r} is out of range: in UTC it falls outside the years 1 to 9999") from None


def build_options(
    *,
    since: str | None = None,
    max_queued: int = DoctorOptions.max_queued,
    queued_age_minutes: int = int(DoctorOptions.queued_age.total_seconds() // 60),
    checks: Iterable[str] = (),
) -> DoctorOptions:
    """Validate the CLI's values and build the options doctor runs with."""
    selected = tuple(checks)
    unknown = [name for name in selected if name not in CHECK_NAMES]
    if unknown:
        raise DoctorError(f"unknown check {unknown[0]!r}; choose from {', '.join(CHECK_NAMES)}")
    if max_queued < 0:
        raise DoctorError("--max-queued must be 0 or more")
    if not 0 <= queued_age_minutes <= MAX_QUEUED_AGE_MINUTES:
        raise DoctorError(f"--queued-age must be 0 to {MAX_QUEUED_AGE_MINUTES} minutes (100 years), "
                          f"got {queued_age_minutes}")
    return DoctorOptions(
        since=parse_since(since) if since else None,
        max_queued=max_queued,
        queued_age=datetime.timedelta(minutes=queued_age_minutes),
        checks=selected,
    )
