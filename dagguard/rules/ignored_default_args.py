"""The note a DAG-level finding's help gets when the setting it asks for sits in `default_args`,
where the DAG ignores it: `catchup`, `max_active_runs` and `max_active_tasks` are DAG
arguments, and `default_args` only reaches the tasks (start_date and end_date excepted)."""

from __future__ import annotations

from dagguard.model.dags.models import DagModel


def noting_default_args(help: str, dag: DagModel, *names: str) -> str:
    """`help`, led by a note for each of `names` that `dag`'s default_args sets in vain."""
    ignored = [name for name in names if dag.default_args.get(name) is not None]
    if not ignored:
        return help
    listed = " and ".join(f"'{name}'" for name in ignored)
    verb, pronoun = ("is", "it") if len(ignored) == 1 else ("are", "them")
    return f"{listed} in default_args {verb} ignored by Airflow, set {pronoun} on the DAG; {help}"
