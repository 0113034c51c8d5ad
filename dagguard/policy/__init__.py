"""dagguard's Airflow cluster policy: the linter's rules that can be judged on a loaded DAG
object (DG101, DG102, DG103, DG107, DG206, DG303), run by Airflow on every DAG it loads, so
DAGs that no static reader sees (YAML, `globals()` loops, objects made elsewhere) are checked.

    # airflow_local_settings.py
    from dagguard.policy import dag_policy

Or, without touching airflow_local_settings.py, the `airflow.policy` plugin entry
(dagguard.policy.plugin), switched on with AIRFLOW__DAGGUARD__ENABLED=true.

Imported in every DAG processor: nothing here imports libcst, and sqlglot and jinja2 only for
a DAG whose tasks have templated SQL on a trigger timetable. May import: dagguard.config,
dagguard.engine.selection, the libcst-free model modules (run_counts, antichains, sql,
sql_facts, templates, airflow_names) and dagguard.rules.messages; Airflow only when called.
"""

from __future__ import annotations

from dagguard.policy.apply import dag_policy

__all__ = ["dag_policy"]
