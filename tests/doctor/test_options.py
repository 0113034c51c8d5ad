"""Parsing the user's deploy time and option values."""

from __future__ import annotations

import datetime

import pytest

from dagguard.doctor.errors import DoctorError
from dagguard.doctor.options import build_options, parse_since

UTC = datetime.timezone.utc


@pytest.mark.parametrize("text, expected", [
    ("2026-11-30T14:00Z", datetime.datetime(2026, 11, 30, 14, 0, tzinfo=UTC)),
    ("2026-11-30T14:00:05+02:00", datetime.datetime(2026, 11, 30, 12, 0, 5, tzinfo=UTC)),
    ("2026-11-30 14:00", datetime.datetime(2026, 11, 30, 14, 0, tzinfo=UTC)),
    ("2026-11-30", datetime.datetime(2026, 11, 30, tzinfo=UTC)),
], ids=["zulu", "offset", "naive-is-utc", "date"])
def test_parse_since(text: str, expected: datetime.datetime):
    assert parse_since(text) == expected


def test_negative_threshold_is_rejected():
    with pytest.raises(DoctorError, match="--max-queued"):
        build_options(max_queued=-1)
