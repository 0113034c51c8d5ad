"""DG110: a PartitionedAssetTimetable waiting for every one of its assets, whose mappers map
them to keys that can never be equal: Airflow never triggers the DAG."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags.models import FileModel
from dagguard.model.schedules.partitions import Mapper, PartitionedAsset, dag_partition_schedule, never_matching
from dagguard.rules.base import Report, Rule, RuleContext

HELP = ("map every asset to keys of one form: the same mapper (or output_format=) for each, and a "
        "RollupMapper to wait for all the finer partitions of a coarser one")


class PartitionKeysNeverMatch(Rule):
    code = "DG110"
    name = "partition-keys-never-match"
    severity = "error"
    summary = "A PartitionedAssetTimetable whose assets' mappers emit keys that never match: it never triggers"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        for dag in file.dags:
            schedule = dag_partition_schedule(file, dag)
            if schedule is None or schedule.node is None:
                continue
            pair = never_matching(schedule)
            if pair is None:
                continue
            first, other = pair
            yield Report(
                node=schedule.node,
                message=f"{dag.label} waits for a partition of every one of {schedule.condition}, but their "
                        f"partition mappers emit keys that never match ({_emits(first)}, {_emits(other)}); "
                        "Airflow never triggers a run",
                help=HELP,
                dag=dag,
            )


def _emits(asset: PartitionedAsset) -> str:
    mapper: Mapper = asset.mapper  # type: ignore[assignment]  # never_matching reads only mapped assets
    what = f"'{mapper.fixed_key}'" if mapper.fixed_key is not None else f"'{mapper.key_format}'"
    return f"{what} from {mapper.name} for {asset.text}"
