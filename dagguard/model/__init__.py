"""Airflow knowledge the rules share: imports, static values, DAGs and tasks, schedules."""
