"""Tasks and callables: what a task reads and writes (task I/O), the analysis of a Python
callable's body (clock reads, context reads, SQL calls, writes, scratch paths), callables no DAG
names, operator arguments that write, append-only inserts, strings assembled from pieces and
who owns a helper. The top of the model: it may import every other dagguard.model package
(basics, sql, project, dags, schedules)."""
