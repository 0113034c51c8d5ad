"""Text and JSON views of the ledger, for `dagguard ledger`."""

from __future__ import annotations

import json
from dataclasses import asdict

from dagguard.idempotent.ledger import LedgerReport

FORMATS = ("text", "json")


def exit_code(report: LedgerReport) -> int:
    """1 when some interval was written twice with different checksums, else 0."""
    return 1 if report.conflicts else 0


def _short(iso: str) -> str:
    return iso.replace("+00:00", "Z")


def _scope(start: str, end: str, partition_key: str | None) -> str:
    """`[start, end)`, `partition=KEY`, or both: what the write owned."""
    interval = f"[{_short(start)}, {_short(end)})" if start else ""
    partition = f"partition={partition_key}" if partition_key is not None else ""
    return " ".join(p for p in (interval, partition) if p) or "-"


def render_text(report: LedgerReport) -> str:
    """One line per write, then one line per conflicting interval and a summary."""
    lines = []
    for e in report.entries:
        who = ".".join(p for p in (e.dag_id, e.task_id) if p) or "-"
        run = f" run={e.run_id}" if e.run_id else ""
        attempt = f" try={e.try_number}" if e.try_number is not None else ""
        lines.append(f"{_short(e.written_at)}  {e.table_name} {_scope(e.interval_start, e.interval_end, e.partition_key)} "
                     f"{e.strategy} rows={e.row_count} inserted={e.rows_inserted} "
                     f"updated={e.rows_updated} deleted={e.rows_deleted} checksum={e.checksum} "
                     f"by {who}{run}{attempt}")
    for c in report.conflicts:
        lines.append(f"{c.table_name} {_scope(c.interval_start, c.interval_end, c.partition_key)} was written "
                     f"{c.writes} times with {len(c.checksums)} different checksums; its source is not "
                     f"deterministic, so reruns change the data")
    intervals = len({(e.table_name, e.interval_start, e.interval_end, e.partition_key) for e in report.entries})
    lines.append(f"{len(report.entries)} write(s) of {intervals} interval(s), "
                 f"{len(report.conflicts)} interval(s) with different checksums")
    return "\n".join(lines) + "\n"


def render_json(report: LedgerReport) -> str:
    """{"entries": [...], "conflicts": [...]} with the dataclasses' fields."""
    payload = {"entries": [asdict(e) for e in report.entries],
               "conflicts": [asdict(c) for c in report.conflicts]}
    return json.dumps(payload, indent=2) + "\n"


def render(report: LedgerReport, output_format: str) -> str:
    """The report in `output_format` (one of FORMATS)."""
    return render_json(report) if output_format == "json" else render_text(report)
