"""Partitioned and @asset DAGs through the engine: the listing and the findings are the same
from a warm cache and with two jobs as from a cold run in one process."""

from __future__ import annotations

from pathlib import Path

from dagguard.api import check_paths
from dagguard.config import Settings
from tests.lint_helpers import NOW

PARTITIONED = """
from airflow.sdk import DAG, Asset, CronPartitionTimetable, PartitionedAssetTimetable, StartOfDayMapper, asset

@asset(schedule=CronPartitionTimetable("0 * * * *", timezone="UTC"))
def hourly_events(context):
    return context["data_interval_start"]

with DAG("daily_events", schedule=PartitionedAssetTimetable(assets=hourly_events,
                                                           default_partition_mapper=StartOfDayMapper())):
    pass
"""


def _check(paths: list[Path], cache: Path | None, jobs: int = 1):
    settings = Settings(config_path=paths[0].parent / "pyproject.toml")
    return check_paths(paths, settings=settings, now=NOW, jobs=jobs, cache_dir=cache)


def test_partitioned_listing_and_findings_from_a_warm_cache_and_two_jobs(tmp_path: Path) -> None:
    folder = tmp_path / "dags"
    folder.mkdir()
    files = []
    for index in range(4):   # enough files for two jobs to share them
        path = folder / f"events_{index}.py"
        path.write_text(PARTITIONED.replace("daily_events", f"daily_events_{index}")
                        .replace("hourly_events", f"hourly_events_{index}"), encoding="utf-8")
        files.append(path)
    cold = _check(files, None)
    listed = {dag.dag_id: dag for dag in cold.dags}
    assert listed["hourly_events_0"].found_by == "@asset"
    assert listed["hourly_events_0"].partition == "key %Y-%m-%dT%H:%M:%S every 1:00:00, no data interval"
    assert listed["daily_events_0"].schedule == "PartitionedAssetTimetable(hourly_events_0; StartOfDayMapper)"
    assert sorted({f.code for f in cold.findings}) == ["DG208"]
    assert _check(files, tmp_path / "cache") == cold
    assert _check(files, tmp_path / "cache") == cold     # warm
    assert _check(files, None, jobs=2) == cold
