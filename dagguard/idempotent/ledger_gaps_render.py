"""Text and JSON views of `dagguard ledger --gaps`."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from dagguard.idempotent.ledger_gaps import GapReport, Span, TableGaps

UTC = dt.timezone.utc


def exit_code(report: GapReport) -> int:
    """1 when some interval of the schedule has no write, else 0."""
    return 1 if report.missing_count else 0


def _short(moment: dt.datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def runs_of(missing: tuple[Span, ...]) -> list[tuple[Span, int]]:
    """Consecutive missing intervals joined: each run as one span and how many intervals it holds."""
    runs: list[tuple[Span, int]] = []
    for span in missing:
        if runs and runs[-1][0].end == span.start:
            joined, count = runs[-1]
            runs[-1] = (Span(joined.start, span.end), count + 1)
        else:
            runs.append((span, 1))
    return runs


def _name(gaps: TableGaps) -> str:
    return gaps.table if gaps.table is not None else "(no table: the ledger holds no write)"


def render_text(report: GapReport) -> str:
    """One line per run of consecutive missing intervals, one per complete table, a summary."""
    lines = []
    for gaps in report.tables:
        for span, count in runs_of(gaps.missing):
            many = f" ({count} intervals)" if count > 1 else ""
            lines.append(f"{_name(gaps)} [{_short(span.start)}, {_short(span.end)}) never written{many}")
        if not gaps.missing:
            lines.append(f"{_name(gaps)}: every interval written")
    if report.intervals:
        window = f"from {_short(report.intervals[0].start)} to {_short(report.intervals[-1].end)}"
    else:
        window = f"(none complete from {_short(report.start)} by {_short(report.now)})"
    incomplete = sum(1 for t in report.tables if t.missing)
    lines.append(f"{report.missing_count} interval(s) missing in {incomplete} of {len(report.tables)} table(s); "
                 f"{report.schedule!r} has {len(report.intervals)} interval(s) {window}")
    return "\n".join(lines) + "\n"


def render_json(report: GapReport) -> str:
    """{"schedule", "start", "end", "intervals", "count", "tables": [{"table", "count", "missing"}]}."""
    payload: dict[str, Any] = {
        "schedule": report.schedule,
        "start": _iso(report.start),
        "end": _iso(report.end) if report.end is not None else None,
        "now": _iso(report.now),
        "intervals": len(report.intervals),
        "count": report.missing_count,
        "tables": [{"table": t.table, "count": len(t.missing),
                    "missing": [{"start": _iso(s.start), "end": _iso(s.end)} for s in t.missing]}
                   for t in report.tables],
    }
    return json.dumps(payload, indent=2) + "\n"


def render(report: GapReport, output_format: str) -> str:
    """The report in `output_format` ("text" or "json", as ledger_render.FORMATS)."""
    return render_json(report) if output_format == "json" else render_text(report)
