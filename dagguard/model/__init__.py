"""Airflow knowledge the rules share, in packages by what they know, each importing only the ones
below it: basics (names and values) <- sql (SQL and templates) and project (the project index
and factories) <- dags (the DAG model) <- schedules (DAG-level time) <- tasks (tasks and
callables). It imports nothing above it (dagguard.rules, dagguard.engine ...)."""
