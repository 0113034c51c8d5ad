"""The `airflow.policy` plugin entry: Airflow loads every installed package's entry in that
group (pluggy, before airflow_local_settings.py), so installing dagguard beside Airflow makes
this hook present; it does nothing until AIRFLOW__DAGGUARD__ENABLED=true is set."""

from __future__ import annotations

import os
from typing import Any, Mapping

import pluggy

# Airflow's marker (airflow/policies.py): made here so that importing this needs no Airflow.
hookimpl = pluggy.HookimplMarker("airflow.policy")

ENABLED_VARIABLE = "AIRFLOW__DAGGUARD__ENABLED"


def enabled(environ: Mapping[str, str] = os.environ) -> bool:
    """Is the plugin switched on (`true`, `1`, `yes`, any case)?"""
    return environ.get(ENABLED_VARIABLE, "").strip().lower() in ("true", "1", "yes")


@hookimpl
def dag_policy(dag: Any) -> None:
    """dagguard's dag_policy, when switched on."""
    if not enabled():
        return
    from dagguard.policy.apply import dag_policy as apply

    apply(dag)
