"""DAG-level time: a DAG's schedule, timetable and recurrence, how many runs a span holds
(cron counting), run dates, the cadence a clock read takes, Airflow partitions, DAGs that are
never scheduled and runs triggered by other DAGs. It may import dagguard.model.basics,
dagguard.model.project and dagguard.model.dags."""
