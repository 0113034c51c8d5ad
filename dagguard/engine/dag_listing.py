"""What `dagguard dags` lists: each DAG the linter sees, with its arguments as resolved."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:   # the listing is read without the model: a cached run has no tree
    from dagguard.model.basics.arguments import Arguments
    from dagguard.model.dags.models import DagModel
    from dagguard.model.schedules.partitions import PartitionSchedule

UNKNOWN_TEXT = "unknown"
NOT_SET = "not set"
LISTED_ARGUMENTS = ("schedule", "catchup", "start_date", "end_date", "max_active_runs", "max_active_tasks")
_SCHEDULES = ("schedule", "schedule_interval", "timetable")


@dataclass(frozen=True)
class DagSummary:
    """One DAG as the linter resolved it; every value is text: the value, "unknown" or "not set"."""

    path: str
    line: int
    dag_id: str
    found_by: str                 # "DAG()", "@dag", the factory's qualified name, or "dag-factory" (YAML)
    schedule: str
    catchup: str
    start_date: str
    end_date: str
    max_active_runs: str
    max_active_tasks: str
    # What a partitioned DAG's runs carry instead of a data interval; "" for other DAGs.
    partition: str = ""

    def as_dict(self) -> dict[str, Any]:
        values = asdict(self)
        if not self.partition:
            del values["partition"]   # listed for partitioned DAGs only, in JSON as in text
        return values


def summarize(dag: DagModel, shown: str, line: int) -> DagSummary:
    """The DAG's listing entry."""
    from dagguard.model.schedules.partitions import partition_schedule

    schedule = next((name for name in _SCHEDULES if name in dag.args), "schedule")
    partitions = partition_schedule(dag)
    return DagSummary(
        path=shown, line=line, dag_id=dag.dag_id if dag.dag_id is not None else UNKNOWN_TEXT,
        found_by=dag.found_by,
        schedule=_schedule(dag, schedule, partitions),
        catchup=_argument(dag.args, "catchup"),
        start_date=_date(dag, "start_date"),
        end_date=_date(dag, "end_date"),
        max_active_runs=_argument(dag.args, "max_active_runs"),
        max_active_tasks=_argument(dag.args, "max_active_tasks"),
        partition=partitions.runs() if partitions is not None else "",
    )


def _schedule(dag: DagModel, name: str, partitions: Optional[PartitionSchedule]) -> str:
    from dagguard.model.schedules.schedules import unread_timetable

    written = _argument(dag.args, name)
    if written != UNKNOWN_TEXT:
        return written
    if partitions is not None:
        return partitions.describe()
    # Airflow's timetable classes are named even when their value is not static: such a DAG
    # recurs, on crons that are listed when known.
    timetable = unread_timetable(dag)
    if timetable is None:
        return written
    kind, rec = timetable
    return f"{kind}({', '.join(rec.crons) or UNKNOWN_TEXT})"


def _date(dag: DagModel, name: str) -> str:
    direct = _argument(dag.args, name)
    if direct not in (NOT_SET, "None"):
        return direct
    inherited = _argument(dag.default_args, name)
    return direct if inherited == NOT_SET else inherited


def _argument(args: Arguments, name: str) -> str:
    arg = args.get(name)
    if arg is None:
        return NOT_SET if args.complete else UNKNOWN_TEXT
    return _text(arg.value)


def _text(value: Any) -> str:
    from dagguard.model.basics.values import UNKNOWN, AssetSchedule, StaticDict, Timetable   # loaded by then: the file was parsed

    if value is UNKNOWN:
        return UNKNOWN_TEXT
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, Timetable):
        return f"{value.qualname.rsplit('.', 1)[-1]}({value.cron or value.delta})"
    if isinstance(value, AssetSchedule):
        return "assets"
    if isinstance(value, StaticDict):
        return UNKNOWN_TEXT
    return str(value)


def format_text(dags: list[DagSummary]) -> str:
    """One line per DAG, `path:line: dag_id (found by) key=value ...`."""
    lines = []
    for dag in dags:
        values = " ".join(f"{name}={getattr(dag, name)}" for name in LISTED_ARGUMENTS)
        if dag.partition:
            values += f" partition={dag.partition}"
        lines.append(f"{dag.path}:{dag.line}: {dag.dag_id} ({dag.found_by}) {values}")
    return "\n".join(lines)


def format_unseen(files: list[tuple[str, str]]) -> str:
    """One line per file whose DAGs went unseen, `path: reason`."""
    return "\n".join(f"{path}: {reason}" for path, reason in files)


def unseen_note(count: Optional[int]) -> Optional[str]:
    """The summary line for files that look like DAG files but define no DAG the linter sees."""
    if not count:
        return None
    subject = ("1 file imports airflow and looks like a DAG file but defines" if count == 1
               else f"{count:,} files import airflow and look like DAG files but define")
    return (f"{subject} no DAG dagguard can see (`dagguard dags --unseen` says why for each); a DAG factory "
            "outside the checked paths can be declared under [tool.dagguard.dag-factories.\"pkg.make_dag\"], "
            "and dagguard.policy checks the DAGs no static reader sees when Airflow loads them (README: Cluster policy)")
