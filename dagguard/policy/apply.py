"""`dag_policy(dag)`: Airflow's cluster policy hook. Applies the rules that can be judged on a
loaded DAG, refuses the DAG (AirflowClusterPolicyViolation, an import error in the UI) for
errors, logs warnings, and never changes the DAG. A failure of the policy itself is logged
and the DAG loads unchecked: a bug here must not take DAGs down."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from dagguard.config import ConfigError
from dagguard.engine.selection import ignored_for_file, is_enabled
from dagguard.policy.findings import POLICY_RULES, Finding
from dagguard.policy.intervals import interval_findings
from dagguard.policy.scheduling import Limits, dag_label, scheduling_findings
from dagguard.policy.settings import PolicySettings, load_settings
from dagguard.policy.task_ids import task_id_findings

log = logging.getLogger("dagguard.policy")


@dataclass(frozen=True)
class Judged:
    """A finding with the severity it has under the settings."""

    finding: Finding
    severity: str


def judge(dag: Any, settings: PolicySettings, limits: Limits, now: dt.datetime) -> list[Judged]:
    """The enabled rules' findings on the loaded DAG, in code order."""
    label = dag_label(dag)
    found = [*scheduling_findings(dag, limits, now), *interval_findings(dag, label), *task_id_findings(dag, label)]
    path = Path(dag.fileloc) if getattr(dag, "fileloc", None) else None
    kept = [f for f in found if is_enabled(f.code, settings.lint)
            and (path is None or not ignored_for_file(f.code, path, settings.lint))]
    kept.sort(key=lambda f: f.code)
    return [Judged(f, settings.severity_of(f.code, POLICY_RULES[f.code])) for f in kept]


def refusal(dag: Any, judged: list[Judged], settings: PolicySettings) -> Optional[str]:
    """The import error's text when the DAG is refused: its errors, each with its help."""
    errors = [j.finding for j in judged if j.severity == "error"]
    if settings.mode == "warn" or not errors:
        return None
    codes = ", ".join(sorted({f.code for f in errors}))
    lines = [f"dagguard refused {dag_label(dag)} ({codes}):", *(f.line() for f in errors)]
    return "\n".join(lines)


def dag_policy(dag: Any) -> None:
    """Airflow calls this for every DAG it loads (`from dagguard.policy import dag_policy` in
    airflow_local_settings.py, or the `airflow.policy` plugin entry)."""
    try:
        judged, settings = _check(dag)
        reason = refusal(dag, judged, settings)
        _log(dag, judged, refused=reason is not None)
    except ConfigError as exc:
        log.error("dagguard: %s; DAG %r loads unchecked", exc, getattr(dag, "dag_id", dag))
        return
    except Exception:
        log.exception("dagguard: the cluster policy failed on DAG %r; it loads unchecked",
                      getattr(dag, "dag_id", dag))
        return
    if reason is not None:
        from airflow.exceptions import AirflowClusterPolicyViolation

        raise AirflowClusterPolicyViolation(reason)


def _check(dag: Any) -> tuple[list[Judged], PolicySettings]:
    fileloc = getattr(dag, "fileloc", None)
    settings = load_settings(Path(fileloc) if fileloc else Path.cwd() / "-", _dags_root(dag))
    limits = _limits(settings)
    return judge(dag, settings, limits, dt.datetime.now(dt.timezone.utc)), settings


def _log(dag: Any, judged: list[Judged], refused: bool) -> None:
    where = getattr(dag, "fileloc", None) or "?"
    for item in judged:
        if refused and item.severity == "error":
            continue  # the import error carries it
        level = logging.ERROR if item.severity == "error" else logging.WARNING
        log.log(level, "dagguard: %s: %s", where, item.finding.line())


def _limits(settings: PolicySettings) -> Limits:
    runs = tasks = 16
    try:
        from airflow.configuration import conf

        runs = conf.getint("core", "max_active_runs_per_dag", fallback=16)
        tasks = conf.getint("core", "max_active_tasks_per_dag", fallback=16)
    except ImportError:   # judged outside Airflow (dagguard's tests): Airflow's own defaults
        pass
    return Limits(runs, tasks, settings.lint.max_catchup_runs, settings.lint.fix_max_active_tasks)


def _dags_root(dag: Any) -> Optional[Path]:
    """Where the search for dagguard.toml stops: the DAG bundle's root (the file's path less its
    path relative to the bundle), else Airflow's [core] dags_folder."""
    fileloc, relative = getattr(dag, "fileloc", None), getattr(dag, "relative_fileloc", None)
    if fileloc and relative and not Path(relative).is_absolute():
        path, tail = Path(fileloc), Path(relative)
        if path.parts[-len(tail.parts):] == tail.parts:
            return Path(*path.parts[:-len(tail.parts)])
    try:
        from airflow.configuration import conf

        return Path(conf.get("core", "dags_folder")).resolve()
    except Exception:
        return None
