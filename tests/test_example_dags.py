"""The README's main job: `dagguard check example_dags/` flags the incident, passes the clean DAG."""

from __future__ import annotations

from collections import defaultdict

from dagguard.api import check_paths
from dagguard.config import Settings
from tests.lint_helpers import NOW


def findings_by_file(repo_root):
    result = check_paths([repo_root / "example_dags"], settings=Settings(), now=NOW)
    by_file = defaultdict(list)
    for finding in result.findings:
        by_file[finding.path.rsplit("/", 1)[-1]].append(finding)
    return result, by_file


def test_incident_dag_gets_the_scheduling_findings_with_a_run_estimate(repo_root):
    result, by_file = findings_by_file(repo_root)
    incident = by_file["incident_orders_hourly.py"]
    assert {"DG101", "DG102", "DG103"} <= {f.code for f in incident}
    dg101 = next(f for f in incident if f.code == "DG101")
    assert "catchup would queue ~10,000 runs" in dg101.message
    assert result.internal_errors == ()


def test_clean_dag_has_no_findings(repo_root):
    _, by_file = findings_by_file(repo_root)
    assert by_file["clean_signups_daily.py"] == []


def test_each_example_shows_its_rules(repo_root):
    _, by_file = findings_by_file(repo_root)
    shown = {name: {f.code for f in found} for name, found in by_file.items()}
    assert {"DG104", "DG105", "DG106"} <= shown["legacy_airflow2_args.py"]
    assert {"DG301", "DG107", "DG303"} <= shown["parse_time_reads.py"]
    assert shown["orders_hourly_copy.py"] == {"DG302"}


def test_the_readme_shows_the_current_output(repo_root, monkeypatch):
    """The README's full listing is what `dagguard check example_dags/` prints (on the day it
    names: DG101's run estimate grows with time)."""
    from pathlib import Path

    from dagguard.report.text import format_text

    monkeypatch.chdir(repo_root)
    result = check_paths([Path("example_dags")], settings=Settings(), now=NOW)
    readme = (repo_root / "README.md").read_text()
    intro = f"`dagguard check example_dags/` (run on {NOW.date().isoformat()}; exit code 1):\n\n```\n"
    listing = readme.split(intro, 1)[1].split("```", 1)[0]
    assert format_text(result, color=False) == listing
    assert f"\n{listing.splitlines()[-1]}\n```" in readme.split(intro, 1)[0]  # the excerpt's summary too
